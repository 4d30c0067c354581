"""What runs and reproductions become for people.

* :mod:`.report`, :mod:`.report_html`, :mod:`.render`: a reproduction's report (Markdown, HTML, terminal);
* :mod:`.plot`: figures; :mod:`.store`: the sweep's resumable result store;
* :mod:`.compare`: several networks side by side (``topocast compare``).
"""
