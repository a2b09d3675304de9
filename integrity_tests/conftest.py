# gpuhunt 0.1.34's own integrity tests are test data, run by run_upstream.py in a folder of their
# own (they import names of 0.1.34 this package does not have): never collected here.
collect_ignore = ["upstream_0_1_34", "run_upstream.py"]
