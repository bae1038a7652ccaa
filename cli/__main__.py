from pubproof.main import command

command()
