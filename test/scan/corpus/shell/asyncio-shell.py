import asyncio

async def run(cmd):
    return await asyncio.create_subprocess_shell(cmd)  # expect: command-injection
