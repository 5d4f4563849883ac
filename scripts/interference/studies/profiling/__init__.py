"""The profiling study (issue 35): each microservice measured alone and beside a tunable bubble on
each shared resource, so that pairs never measured can be predicted (predict.py), the prediction
checked on the pair study's measured pairs (validate.py) and placements advised (advise.py).

Only the pure computation is here so far; the Study class (runs, execution, parsing and the
statistics that write sensitivity.tsv, pressure.tsv and limit_effect.tsv) comes later. Without a
Study subclass the registry skips this folder."""
