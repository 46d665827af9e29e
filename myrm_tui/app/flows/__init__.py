"""The app's flows, one module each, mixed into ``MyrmApp`` (``app.py`` keeps the wiring).

Textual finds a message's handlers along the app's MRO and an action by its attribute name, so a flow is
a mixin: its handlers, actions and workers are the app's own, with no delegating stubs. Each handler and
action is defined in one flow only (``tests/app/flows/test_one_handler.py``).

- ``base``: what every flow shares: the chat screen, the status line, the live numbers, the header.
- ``turn``: a turn and a replay, their events, the queue of typed messages, the approval dialog.
- ``sessions``: start-up, open, new, switch, pick, delete and fork a session.
- ``compaction``: compact on request (with the preview), bring back and unpin.
- ``settings``: the settings screen, ``/model`` and ``/mode``.
- ``panels``: the side panel, the vault, search and the ``/context`` and ``/notes`` lines.
- ``prompt``: what the prompt box sends: a slash command or a message; typing warms the model.
"""
