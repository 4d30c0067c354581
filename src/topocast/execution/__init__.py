"""The run path's driver: :func:`.execute.execute` (plan -> engine -> verification -> measurement).

* :mod:`.execute`: the one ``execute``; :mod:`.result`: :class:`RunResult`, the one result schema;
* :mod:`.routing`: the unicast routing front end (``topocast route``).
"""
