import subprocess


def run_script(cmd, cwd="."):
    return subprocess.check_call(cmd, cwd=cwd)


def build():
    run_script(["git", "submodule", "update", "--init"])
    run_script(["python", "-c", "print('pip install')"])
