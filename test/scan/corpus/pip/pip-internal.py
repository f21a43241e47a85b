from pip._internal.cli.main import main as pip_main  # expect: runtime-install

def setup():
    pip_main(["install", "numpy"])  # expect: runtime-install
