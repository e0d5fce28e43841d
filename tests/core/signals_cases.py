"""Our own real-phrasing cases for signal detection, one group per failure class of issue 12.

Written for this suite, not taken from the evaluation sets: they show that the rules generalise
beyond the development lines. Each positive is (message, [(confidence, fact fragments)]); each
negative is a message that must yield no signal.
"""

from __future__ import annotations

Expected = list[tuple[float, list[str]]]

POSITIVE_BY_CLASS: dict[str, list[tuple[str, Expected]]] = {
    "markdown emphasis and code marks": [
        ("**Always** rebase on `develop` before opening a merge request", [(1.0, ["rebase"])]),
        ("__Never__ store API keys in the frontend bundle", [(1.0, ["api keys"])]),
        ("*Do not* edit files under `vendor/` by hand", [(0.9, ["vendor/"])]),
        ("- **Never commit `.env` files** to the repository", [(1.0, [".env"])]),
        ("Run `cargo fmt --all` before every commit.", [(0.5, ["`cargo fmt --all`"])]),
    ],
    "typographic quotes, apostrophes and dashes": [
        (
            "Don\u2019t add new global state \u2014 pass values explicitly",
            [(0.9, ["global state"])],
        ),
        ("We don\u2019t use default exports.", [(0.9, ["default exports"])]),
        ("Never use \u201cany\u201d as a type annotation", [(1.0, ["type annotation"])]),
    ],
    "bullets and hard line breaks": [
        ("* Always write docstrings for\npublic functions", [(1.0, ["docstrings for public"])]),
        ("1. Never skip the pre-commit\n   hooks when committing", [(1.0, ["pre-commit hooks"])]),
        ("\u2022 Prefer composition over inheritance", [(0.9, ["composition"])]),
    ],
    "label prefixes": [
        ("Formatting: use black, not autopep8", [(0.9, ["black"])]),
        ("Error handling: never swallow exceptions silently", [(1.0, ["swallow exceptions"])]),
        ("Styling: Use CSS modules instead of styled-components", [(0.9, ["css modules"])]),
        ("Package manager: uv", [(0.5, ["uv"])]),
    ],
    "subject before the trigger": [
        ("We use pytest, not unittest.", [(0.9, ["pytest"])]),
        ("We never merge without a green build.", [(1.0, ["merge without a green build"])]),
        ("Our team prefers small pull requests", [(0.9, ["small pull requests"])]),
    ],
    "two rules in one line": [
        (
            "Never edit the generated client - always regenerate it from the OpenAPI spec",
            [(1.0, ["generated client"]), (1.0, ["openapi spec"])],
        ),
        (
            "Never edit migrations by hand; always generate them with alembic",
            [(1.0, ["edit migrations"]), (1.0, ["alembic"])],
        ),
        # the halves of a correction are one rule, not two
        ("Don't use print for logging; use the logging module", [(0.9, ["logging module"])]),
    ],
    "combined triggers": [
        ("Always use poetry instead of pip", [(1.0, ["poetry"])]),
        ("Never use moment.js, use date-fns instead", [(1.0, ["moment.js"])]),
    ],
    "plain project facts": [
        ("We use GitHub Actions for CI.", [(0.5, ["github actions"])]),
        ("This repo uses pnpm workspaces for the monorepo.", [(0.5, ["pnpm workspaces"])]),
        ("Postgres is the primary datastore.", [(0.5, ["postgres"])]),
        ("The default branch is called trunk.", [(0.5, ["trunk"])]),
        ("Commit messages must follow the imperative mood.", [(0.5, ["imperative mood"])]),
        ("Fixtures live in tests/fixtures.", [(0.5, ["tests/fixtures"])]),
        ("Zustand for client-side state", [(0.5, ["zustand"])]),
        ("Keep modules under 300 lines.", [(0.5, ["300 lines"])]),
    ],
    # A second batch written after the rules, as a fresh probe (first run: P 0.94, R 0.85).
    "instruction-file lines": [
        ("**IMPORTANT:** Never modify files in `dist/` directly", [(1.0, ["dist/"])]),
        ("- Always add tests for bug fixes", [(1.0, ["tests for bug fixes"])]),
        ("Don't use `any` in TypeScript code", [(0.9, ["typescript"])]),
        ("Use `pnpm` for all package management", [(0.5, ["pnpm"])]),
        ("We use Poetry for dependency management", [(0.5, ["poetry"])]),
        ("This repo uses Turborepo for builds", [(0.5, ["turborepo"])]),
        ("Prettier is the code formatter", [(0.5, ["prettier"])]),
        ("Python 3.12 is the minimum supported version", [(0.5, ["3.12"])]),
        ("Integration tests live in `tests/integration/`", [(0.5, ["tests/integration/"])]),
        ("All public functions must have docstrings", [(0.5, ["docstrings"])]),
        ("Commit messages: use Conventional Commits", [(0.5, ["conventional commits"])]),
        ("Prefer `pathlib` over `os.path`", [(0.9, ["pathlib"])]),
        ("Avoid `unwrap()` in library code", [(0.9, ["unwrap"])]),
        ("Never use `git push --force` on shared branches", [(1.0, ["`git push --force`"])]),
        (
            "Always use type hints; never use bare `except:`",
            [(1.0, ["type hints"]), (1.0, ["bare except"])],
        ),
        ("Linting: ruff, not flake8", [(0.9, ["ruff", "flake8"])]),
        ("Do NOT add dependencies without asking first.", [(0.9, ["dependencies"])]),
        ("Make sure to always run `npm run lint` before pushing", [(1.0, ["npm run lint"])]),
        ("Use snake_case for Python and camelCase for TypeScript", [(0.5, ["snake_case"])]),
        ("Keep PRs small and focused on one change", [(0.5, ["prs small"])]),
    ],
}

NEGATIVE_BY_CLASS: dict[str, list[str]] = {
    "task requests": [
        "Add a retry to the upload handler and don't change the public API.",
        "Fix the failing snapshot test in src/components/Header.test.tsx",
        "Create a migration for the new orders table",
        "Rename the config loader and update its callers. Do not touch the CLI flags.",
    ],
    "questions": [
        "Should we always pin dependency versions?",
        "Why do we use tabs here?",
        "Is Redis the default cache?",
    ],
    "narration and bug reports": [
        "The login endpoint is returning a 401 instead of a 403 for expired sessions",
        "The nightly build keeps failing on the ARM runners.",
        "It never worked with the old driver either.",
    ],
    "future talk and hedges": [
        "We can always switch to Postgres later.",
        "Maybe we should use a queue for this eventually.",
        "We might never need the second region.",
    ],
    "task-scoped constraints": [
        "Don't push anything until the release is tagged.",
        "In this PR, don't refactor the parser.",
        "Skip the e2e tests for now.",
        "Leave the feature flag on mid-rollout.",
    ],
    "chat that only looks like a fact or practice": [
        "keep going",
        "run tests",
        "That is the problem",
        "It is the default",
        "Bob is the owner of this",
        "OK so we use it all the time",
        "Use your judgement",
        "We have a problem with the build",
        "The app uses too much memory",
        "Just use whatever works",
        "Error: tests must pass",
    ],
    "requests, reports and thanks in chat": [
        "Can you add a dark mode toggle to the settings page?",
        "The CI is failing because the lockfile is out of date",
        "Please update the README with the new install steps and don't forget the badge",
        "I think we could probably use Redis here at some point",
        "Don't merge this PR until the review is done",
        "Let me know when the build passes",
        "Thanks, that worked!",
        "We're seeing a 502 from the gateway after deploy",
        "Add logging to the retry loop, but don't log the token.",
        "For this task, only touch files under src/api.",
        "Why is the app using so much memory?",
        "It always crashes when I open the settings page",
        "Implement pagination for the /orders endpoint. Use cursor-based pagination.",
    ],
    "pronoun without referent": [
        "Never leave them in.",
        "Always double-check this.",
    ],
}
