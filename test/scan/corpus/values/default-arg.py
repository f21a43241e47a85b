def run(cmd, runner=eval):
    return runner(cmd)  # expect: dynamic-execution
