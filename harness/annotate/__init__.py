"""Human rating studies of a scored run: a blind sample (:mod:`~tsteval.annotate.study`), its questions
(:mod:`~tsteval.annotate.template`), the ratings database (:mod:`~tsteval.annotate.store`), the rating server
(:mod:`~tsteval.annotate.server`), crowdsourcing platforms (:mod:`~tsteval.annotate.platforms`), reliability
(:mod:`~tsteval.annotate.reliability`) and the loop back to meta-evaluation and the profile
(:mod:`~tsteval.annotate.loop`)."""
