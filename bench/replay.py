"""History replay: each instruction file's history saved into a memory as a user's saves would,
the final memory compared with the final file (issue 34's view of a user).

    python -m bench.replay [--split dev|val] [--limit N] [--show N]

For each file in ``../shared/corpus/histories/`` (split dev / val by repository, as the corpus's
other sets), a temporary project's ``MemoryStore`` receives, version after version in commit
order, every *rule line* of the version that the memory has not been given before, each through
``save_semantic`` (category ``project_context``, confidence 0.9), one transaction a version,
with ``held`` the entries of the lines that version still holds and ``dropped`` those of the
lines it took out: what the import door gives the memory of a tool's file read whole
(``core/importing.py``), so a line never replaces one the file keeps beside it, and a line
the version rewrote is replaced by its rewrite. A line the file takes back after its entry
was replaced is saved again (the door's ledger went with the entry).
A **rule line** is what ``tools/corpus/lines.py`` would draw for labelling: a prose line outside
code fences, bullets and link markup removed, no heading, table or stub
(``tools/corpus/common.prose_lines``). Then, with each line's entry the one its last save named:

* **still served**: a rule line of the final file whose entry is still in semantic.md and, when
  the entry holds other words (the line reinforced it), holds the line's values too (code,
  names, numbers, paths: ``parse_rule``'s value tokens, found in the entry's text). A line
  whose entry lacks one of them is *blurred*: reinforced into a rule that says something else
  ("**Lint**: `task lint:fix`" into "**Lint**: `task lint` … or `task lint-fix`"), not served;
* **edited away**: a line a version dropped while adding a line at least
  ``EDIT_SIMILARITY`` alike (its rewrite, as the corpus's ``hunk`` pairs are) that the final
  file does not hold; it is *no longer served* when its entry is gone or is the entry of a final
  line (it was merged into its rewrite). A line that was only deleted is not counted: nothing
  told the memory it went;
* **wrong merge**: a rule line of the final file replaced away by the save of another line of
  the final file: the memory lost a rule the file keeps. Two final lines that end on one entry
  (one reinforced the other) are counted apart as *restated*: both are served, in one wording.

Lines a save refuses (a secret in a rule, an HTML comment marker) are left out and counted.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maestro_memory.core.contradiction import holds_values
from maestro_memory.core.frame import use_meaning
from maestro_memory.core.memory import Memory
from maestro_memory.core.model import InputError
from maestro_memory.core.store import MemoryStore

from .labels import shared_corpus

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "corpus"))
from common import prose_lines, split_of

CATEGORY = "project_context"
CONFIDENCE = 0.9
EDIT_SIMILARITY = 0.5  # a dropped line this alike to an added one was rewritten, not deleted


@dataclass
class ReplayScore:
    files: int = 0
    saves: int = 0
    refused: int = 0
    final_rules: int = 0
    served: int = 0
    edited_away: int = 0
    gone: int = 0
    wrong_merges: int = 0
    restated: int = 0
    blurred: int = 0  # final rules reinforced into an entry that lacks one of their values
    linked: int = 0  # final rules linked to a newer line that may replace them (in review)
    linked_away: int = 0  # edited-away rules still served, linked to their rewrite (in review)
    lost: list[str] = field(default_factory=list)  # final rules no longer served
    kept: list[str] = field(default_factory=list)  # edited-away rules still served
    merged: list[str] = field(default_factory=list)

    @property
    def served_rate(self) -> float:
        return self.served / max(self.final_rules, 1)

    @property
    def gone_rate(self) -> float:
        return self.gone / max(self.edited_away, 1)

    def add(self, other: ReplayScore) -> None:
        for name in ("files", "saves", "refused", "final_rules", "served", "edited_away"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.gone += other.gone
        self.wrong_merges += other.wrong_merges
        self.restated += other.restated
        self.blurred += other.blurred
        self.linked += other.linked
        self.linked_away += other.linked_away
        self.lost += other.lost
        self.kept += other.kept
        self.merged += other.merged


def histories(corpus: Path, split: str | None = None) -> Iterator[dict[str, Any]]:
    for path in sorted((corpus / "histories").glob("*.json")):
        history = json.loads(path.read_text(encoding="utf-8"))
        if split is None or split_of(history["repo"]) == split:
            yield history


def _rewritten(dropped: list[str], added: list[str]) -> list[str]:
    out = []
    for line in dropped:
        matcher = difflib.SequenceMatcher(None, line.lower(), "", autojunk=False)
        for new in added:
            matcher.set_seq2(new.lower())
            if matcher.quick_ratio() >= EDIT_SIMILARITY and matcher.ratio() >= EDIT_SIMILARITY:
                out.append(line)
                break
    return out


def replay(history: dict[str, Any], root: Path) -> ReplayScore:
    """One file's history into a new memory at ``root``; its score."""
    score = ReplayScore(files=1)
    store = MemoryStore(root)
    entry_of: dict[str, str] = {}  # line -> the entry its last save named
    removed_by: dict[str, str] = {}  # entry id -> the line whose save replaced it
    edited: set[str] = set()
    given: set[str] = set()
    previous: list[str] = []
    for version in history["versions"]:
        lines = list(dict.fromkeys(prose_lines(version["text"])))
        present = set(lines)
        added = [line for line in lines if line not in set(previous)]
        gone = [p for p in previous if p not in present]
        edited.update(_rewritten(gone, added))
        # A line the file takes back after the memory replaced its entry is the import door's
        # new bullet again (its ledger went with the entry): saved afresh.
        back = {line for line in added if entry_of.get(line) in removed_by}
        new = [line for line in lines if line not in given or line in back]
        given.update(new)
        previous = lines

        # What the file holds now stands side by side, as the import door gives it (a tool's
        # file read whole): a line never replaces another the same version still holds; and
        # what this version took out is the source's to rewrite (``dropped``).
        held = {entry_of[line] for line in lines if line in entry_of}
        dropped = {entry_of[line] for line in gone if line in entry_of} - held

        def save_all(
            memory: Memory, new: list[str] = new, held: set[str] = held, dropped: set[str] = dropped
        ) -> None:
            for line in new:
                score.saves += 1
                try:
                    result = memory.save_semantic(
                        line, CATEGORY, CONFIDENCE, held=held, dropped=dropped
                    )
                except InputError:  # a text a fact cannot hold (an HTML comment marker)
                    score.refused += 1
                    continue
                if result.entry is None:
                    score.refused += 1
                    continue
                entry_of[line] = result.entry.id
                held.add(result.entry.id)
                if result.replaced is not None:
                    removed_by[result.replaced.id] = line

        if new:
            store.run(save_all)
    final = list(dict.fromkeys(prose_lines(history["versions"][-1]["text"])))
    semantic = store.read().view().semantic
    live = {e.id for e in semantic}
    text_of = {e.id: e.text for e in semantic}
    # Linked to a newer rule that may replace it (core/frame.py): still served, in review.
    waiting = {e.id for e in semantic if e.superseded_by is not None}
    final_set = set(final)
    final_entries: dict[str, str] = {}
    for line in final:
        entry = entry_of.get(line)
        if entry is None:
            continue  # refused by the privacy screen
        score.final_rules += 1
        score.linked += entry in waiting
        if entry in live and not holds_values(text_of[entry], line):
            score.blurred += 1
            score.lost.append(f"{line!r}\n      blurred into {text_of[entry]!r}")
        elif entry in live:
            score.served += 1
            if final_entries.setdefault(entry, line) != line:
                score.restated += 1  # two lines of the file on one entry: served, one wording
        else:
            score.lost.append(line)
            by = removed_by.get(entry)
            if by in final_set and by != line:
                score.wrong_merges += 1
                score.merged.append(f"{line!r}\n      replaced by {by!r}")
    for line in sorted(edited - final_set):
        entry = entry_of.get(line)
        if entry is None:
            continue
        score.edited_away += 1
        if entry not in live or entry in final_entries:
            score.gone += 1
        else:
            score.linked_away += entry in waiting
            score.kept.append(line)
    return score


def run(corpus: Path, split: str | None, limit: int | None = None) -> ReplayScore:
    total = ReplayScore()
    with tempfile.TemporaryDirectory(prefix="maestro-replay-") as tmp:
        for n, history in enumerate(histories(corpus, split)):
            if limit is not None and n >= limit:
                break
            root = Path(tmp) / str(n)
            root.mkdir()
            total.add(replay(history, root))
    return total


def report(score: ReplayScore, split: str, show: int = 0) -> str:
    lines = [
        f"[{split}] replay of {score.files} histories, {score.saves} saves "
        f"({score.refused} refused): still served {score.served_rate:.3f} "
        f"({score.served}/{score.final_rules}), edited-away no longer served "
        f"{score.gone_rate:.3f} ({score.gone}/{score.edited_away}), "
        f"wrong merges {score.wrong_merges}, blurred {score.blurred}, restated "
        f"{score.restated}; linked (served, in "
        f"review): {score.linked} final rules, {score.linked_away} edited-away"
    ]
    if show:
        lines += ["", "wrong merges:", *(f"  {m}" for m in score.merged[:show])]
        lines += ["", "final rules lost:", *(f"  {m!r}" for m in score.lost[:show])]
        lines += ["", "edited away, still served:", *(f"  {m!r}" for m in score.kept[:show])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__)
    parser.add_argument("--split", choices=("dev", "val"), default="dev")
    parser.add_argument("--limit", type=int, help="replay only the first N histories")
    parser.add_argument("--show", type=int, default=0, help="print this many failures")
    args = parser.parse_args(argv)
    corpus = shared_corpus(required=True)
    assert corpus is not None
    use_meaning()  # as the daemon saves
    print(report(run(corpus, args.split, args.limit), args.split, args.show))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
