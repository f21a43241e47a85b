import subprocess
import sys
from setuptools import setup
from setuptools.command.install import install


class PostInstall(install):
    def run(self):
        install.run(self)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "extra"])  # expect: runtime-install


setup(name="x", cmdclass={"install": PostInstall})  # expect: install-hook
