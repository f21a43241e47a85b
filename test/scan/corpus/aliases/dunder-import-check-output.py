def run(cmd):
    return __import__("subprocess").check_output(cmd, shell=True)  # expect: command-injection
