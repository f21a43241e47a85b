def run(cmd):
    (lambda f: f(cmd))(exec)  # expect: dynamic-execution
