"""GPU names no offer can match: the closest names, and each said once per `warned` set."""

from gpuhunt._internal.query.names import gpu_name_problems


def test_unknown_names_get_the_closest_and_are_said_once():
    warned: set[str] = set()
    first = gpu_name_problems(["H10O", "H100", "MyBoard"], ["MyBoard"], warned)
    assert len(first) == 1 and first[0].startswith("Unknown GPU name 'H10O', no offer has it")
    assert "did you mean" in first[0] and "H100" in first[0]
    assert gpu_name_problems(["H10O"], [], warned) == []  # said already
    assert gpu_name_problems(["A100:8", "RTX 4090"], []) == []  # known names, a count
