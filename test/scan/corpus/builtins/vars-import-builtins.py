def run(cmd):
    vars(__import__("builtins"))["exec"](cmd)  # expect: dynamic-execution
