"""The peer the append and rebuild figures are compared with: the Python
`eventsourcing` library on SQLite, without signing or encryption.

Usage: python eventsourcing_peer.py EVENTS  ->  prints JSON {append_eps, replay_aggregates_ps}
"""
import json, os, sys, tempfile, time, uuid

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Record(Aggregate):
    @event("Created")
    def __init__(self, store: str, focus: str):
        self.store = store
        self.focus = focus
        self.fields = {}

    @event("Updated")
    def update(self, fields: dict):
        self.fields.update(fields)


class Records(Application):
    pass


def main():
    n = int(sys.argv[1])
    per = 10
    with tempfile.TemporaryDirectory() as d:
        os.environ["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        os.environ["SQLITE_DBNAME"] = os.path.join(d, "es.sqlite")
        app = Records()
        ids = []
        t0 = time.perf_counter()
        for i in range(n // per):
            r = Record(store="feeding", focus="newMom")
            for j in range(per - 1):
                r.update({"amountMl": j * 10, "side": "left"})
            app.save(r)
            ids.append(r.id)
        append = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in ids:
            app.repository.get(i)
        replay = time.perf_counter() - t0
        print(json.dumps({"events": (n // per) * per, "append_eps": (n // per) * per / append,
                          "replay_aggregates_ps": len(ids) / replay, "replay_eps": (n // per) * per / replay}))


if __name__ == "__main__":
    main()
