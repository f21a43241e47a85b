from subprocess import getoutput as shell
