"""The annotators' page: one static, self-contained HTML file per export.

The tasks go into the page as JSON (labels and highlighted sentences only: which item is
the system output stays in tasks.json), and a small script draws a 0-100 slider per
sentence, keeps the answers in the browser's local storage while the annotator works,
and saves them with a download button as JSON lines: first ``{"export", "annotator"}``,
then one ``{"item", "score"}`` per rated sentence. Nothing is loaded from the network, so
the page works from a file, an e-mail attachment or any static web server.
"""

from __future__ import annotations

import html
import json
from importlib.resources import files

from spanaug_judge.tasks import TaskSet


def render_page(tasks: TaskSet) -> str:
    """The HTML page for ``tasks``."""
    data = {
        "export": tasks.export,
        "tasks": [
            {"task": task.task, "label": task.label,
             "items": [dict(zip(("before", "inside", "after"), item.highlighted()), item=item.item) for item in task.items]}
            for task in tasks.tasks
        ],
    }
    # "<" escaped everywhere means no "</script>" or "<!--" can end the data block early.
    payload = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    template = files("spanaug_judge").joinpath("page.html").read_text(encoding="utf-8")
    title = f"spanaug judgments: {len(tasks.tasks)} tasks"
    return template.replace("__TITLE__", html.escape(title)).replace("__EXPORT__", tasks.export).replace("__DATA__", payload)
