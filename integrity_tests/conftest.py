# run_upstream.py runs gpuhunt 0.1.34's own integrity tests (downloaded from PyPI) in a folder of
# their own: it is a script, never collected here.
collect_ignore = ["run_upstream.py"]
