def swap(fn, other):
    setattr(fn, "__code__", other.__code__)  # expect: bytecode-manipulation
