"""gpuhunt's implementation. Nothing here is public: the public names are re-exported by
`gpuhunt` and `gpuhunt.providers` (docs/design.md, "What is public")."""
