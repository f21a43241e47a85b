import builtins

def run(cmd):
    name = "".join(chr(c) for c in [101, 120, 101, 99])
    getattr(builtins, name)(cmd)  # expect: dynamic-execution
