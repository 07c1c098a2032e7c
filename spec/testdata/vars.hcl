count = 5
env   = "staging"
