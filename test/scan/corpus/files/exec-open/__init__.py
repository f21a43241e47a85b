import os

exec(open(os.path.join(os.path.dirname(__file__), "data", "boot.dat")).read())  # expect: dynamic-execution, code-in-data
