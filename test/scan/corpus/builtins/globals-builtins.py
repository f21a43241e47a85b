def run(cmd):
    globals()["__builtins__"]["eval"](cmd)  # expect: dynamic-execution
