import subprocess


def run_script(cmd):
    return subprocess.check_call(cmd)
