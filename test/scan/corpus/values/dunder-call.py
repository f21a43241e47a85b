def run(cmd):
    exec.__call__(cmd)  # expect: dynamic-execution
