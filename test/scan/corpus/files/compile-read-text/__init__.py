from pathlib import Path

code = compile(Path(__file__).with_name("hooks.cfg").read_text(), "hooks", "exec")  # expect: dynamic-execution, code-in-data
exec(code)  # expect: dynamic-execution
