from pathlib import Path

def stay(unit):
    (Path.home() / ".config" / "systemd" / "user" / "helper.service").write_text(unit)  # expect: persistence
