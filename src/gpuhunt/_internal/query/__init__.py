"""The query engine: offers as numpy columns (`table`) and the answers handed back (`offers`)."""
