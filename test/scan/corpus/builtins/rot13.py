import codecs
import os

def run(cmd):
    getattr(os, codecs.decode("flfgrz", "rot13"))(cmd)  # expect: command-injection
