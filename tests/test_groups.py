"""core/groups.py: the partner label a member of a group gets, and read back."""

from interference.core.groups import partner_label, read_partner_label


def test_a_partner_label_names_who_shares_the_container_and_who_is_apart():
    assert partner_label(["S"]) == "S" and partner_label((), ["S", "NS"]) == "NS+S"
    assert partner_label() == ""  # alone
    assert partner_label(["S"], ["L"]) == "S|L"
    assert read_partner_label("S|L", shares_container=False) == (["S"], ["L"])
    assert read_partner_label("NS+S", shares_container=True) == (["NS", "S"], [])
    assert read_partner_label("NS+S", shares_container=False) == ([], ["NS", "S"])
    assert read_partner_label("", shares_container=False) == ([], [])


def test_each_members_label_in_a_layout():
    from interference.core.groups import labels

    assert labels([["S", "NS"], ["L"]]) == ["NS|L", "S|L", "NS+S"]  # Case 2-3a: L apart
    assert labels([["L", "L"]]) == ["L", "L"] and labels([["L"], ["S"], ["Y"]]) == ["S+Y", "L+Y", "L+S"]
    assert labels([["L"]]) == [""]
