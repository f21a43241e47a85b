def run(cmd):
    __builtins__["exec"](cmd)  # expect: dynamic-execution
