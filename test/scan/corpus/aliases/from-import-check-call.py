from subprocess import check_call

def run(cmd):
    check_call(cmd, shell=True)  # expect: command-injection
