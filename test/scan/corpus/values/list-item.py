def run(cmd):
    [exec][0](cmd)  # expect: dynamic-execution
