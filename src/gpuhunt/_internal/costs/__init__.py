"""What a decision costs beyond the hourly price (issue 49), as pure data and arithmetic:
commitment terms parsed from the price lists the collectors read (`terms`), the usage
arithmetic over offers x terms (`usage`), spot interruption bands (`interruption`) and the
egress and storage prices with a job's total (`transfer`). Nothing here is an offer: terms
and bands are tables beside the offers, published as files of their own (see docs/costs.md)."""
