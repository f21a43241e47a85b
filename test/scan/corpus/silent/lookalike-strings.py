"""__builtins__["exec"](cmd) and sys.modules["os"].system(cmd) are what the scan looks for."""
import subprocess

# (lambda f: f(cmd))(exec)
TEXT = '[exec][0](cmd) and operator.methodcaller("system", cmd)(os)'
PIP = "pip install numpy"


def show(model, items):
    model.eval()
    first = [print][0]
    first(TEXT)
    (lambda f: f(items))(sorted)
    subprocess.run(["git", "status"], check=True)
    return {"go": len}["go"](items)
