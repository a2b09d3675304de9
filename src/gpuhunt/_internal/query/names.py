"""GPU names no offer can match, said before or beside an answer (pure): a name the accelerator
tables do not know and no offer in the catalog carries, with the closest names for a "did you
mean". `Catalog.query` logs them once per name, the CLI makes them an error."""

from __future__ import annotations

from collections.abc import Sequence

from gpuhunt._internal.gpu_names import closest_gpu_names, filter_gpu_name


def gpu_name_problems(
    names: list[str], in_catalog: Sequence[str], warned: set[str] | None = None
) -> list[str]:
    """Why each of `names` can match no offer, given the GPU names `in_catalog`; a name in
    `warned` (lower-case) is skipped, and each one reported is added to it."""
    problems: list[str] = []
    # As written without a count ("A100:8" asks for "A100"), for those the tables do not know.
    unknown = [base for base, known in map(filter_gpu_name, names) if known is None]
    if not unknown:  # the usual case: no need to look at the catalog's names
        return problems
    in_catalog_lower = {n.lower() for n in in_catalog}
    for name in unknown:
        if name.lower() in in_catalog_lower:
            continue
        if warned is not None:
            if name.lower() in warned:
                continue
            warned.add(name.lower())
        close = closest_gpu_names(name, in_catalog)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        problems.append(f"Unknown GPU name {name!r}, no offer has it{hint}")
    return problems
