"""Credentials the suite makes from a secret: the real API key or access token changed so that a server comparing
credentials loosely takes it for the real one, though no server issued it: a character in the middle of its opaque
part changed (a server comparing a prefix or a suffix of up to half of it: a key looked up by its visible start or
its last characters), its last four characters cut (one comparing as far as the sent credential goes), the case
of every letter flipped (one comparing without case: a key looked up under a case-insensitive collation), or its
service prefix another (`conf_live_…` for `ais_live_…`: one looking a key up by its opaque part alone).

Most of a secret, so masked in reports like one; each is kept with its recipe (`fact:cut:`, `fact:case:` or
`fact:swapN:PREFIX`, `fact:INDEX:CHARACTER`), which makes it again from the secret (the re-sent proof) and writes it as a bash expression
over the variable that holds the secret (the curl line): no character of the secret is shown.
"""
from __future__ import annotations

FORMS = ("middle-character-changed", "cut-short", "case-flipped", "prefix-swapped")
PREFIX = "near_miss:"        # the Exchange.credential of a request that carried one: `near_miss:<recipe>`
_MADE: dict[str, str] = {}   # credential -> recipe, for the whole process (the suite-made set's counterpart)


def opaque_start(secret: str) -> int:
    """Where the opaque part of `<svc>_live_…` / `<svc>_oat_…` starts (0 for a credential of another form)."""
    for marker in ("_live_", "_oat_"):
        if marker in secret:
            return secret.index(marker) + len(marker)
    return 0


def _replacement(c: str) -> str:
    """A character of `c`'s kind (digit, lower, upper case) other than `c`, telling next to nothing of `c`."""
    first, second = ("0", "1") if c.isdigit() else ("a", "b") if c.islower() else ("A", "B") if c.isupper() else \
        ("x", "y")
    return first if c != first else second


def make(fact: str, secret: str, form: str) -> str:
    """The near miss of `secret` (the value of target fact `fact`) in `form` (`FORMS`), remembered with its recipe."""
    start = opaque_start(secret)
    if form == "cut-short" and len(secret) - start > 8:
        recipe = f"{fact}:cut:"
    elif form == "case-flipped" and secret[start:].swapcase() != secret[start:]:
        recipe = f"{fact}:case:"
    elif form == "prefix-swapped" and start:
        prefix = secret.index("_")
        recipe = f"{fact}:swap{prefix}:{'conf' if secret[:prefix] != 'conf' else 'xconf'}"
    else:
        at = start + (len(secret) - start) // 2
        recipe = f"{fact}:{at}:{_replacement(secret[at])}"
    value = remade(recipe, secret)
    _MADE[value] = recipe
    return value


def recipe_of(credential: str | None) -> str | None:
    return _MADE.get(credential) if credential else None


def fact_of(recipe: str) -> str:
    return recipe.split(":", 1)[0]


def remade(recipe: str, secret: str) -> str:
    """The near miss `recipe` makes of `secret`."""
    _, at, c = recipe.split(":", 2)
    if at == "cut":
        return secret[:-4]
    if at == "case":
        return secret.swapcase()
    if at.startswith("swap"):
        return c + secret[int(at[4:]):]
    return secret[:int(at)] + c + secret[int(at) + 1:]


def shell(recipe: str, var: str) -> str:
    """The near miss as one double-quoted bash word over `$var`."""
    _, at, c = recipe.split(":", 2)
    if at == "cut":
        return f'"${{{var}%????}}"'
    if at == "case":     # bash's ${x~~} flips the case of every letter
        return f'"${{{var}~~}}"'
    if at.startswith("swap"):
        return f'"{c}${{{var}:{at[4:]}}}"'
    return f'"${{{var}:0:{at}}}{c}${{{var}:{int(at) + 1}}}"'


def describe(recipe: str) -> str:
    fact, at, c = recipe.split(":", 2)
    what = {"api_key": "the API key", "access_token": "the access token"}.get(fact, fact)
    return f"{what} without its last four characters" if at == "cut" else \
        f"{what} with the case of its letters flipped" if at == "case" else \
        f"{what} under the service prefix {c!r}" if at.startswith("swap") else \
        f"{what} with character {int(at) + 1} changed"
