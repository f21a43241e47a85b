from pickle import loads as _decode

def restore(blob):
    return _decode(blob)  # expect: unsafe-deserialization
