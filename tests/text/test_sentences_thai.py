"""Thai sentences: written with no end mark, a space between two Thai words ends one."""

from __future__ import annotations

import pytest

from explorer.text.sentences import sentence_spans


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


def test_spaces_between_thai_words_end_sentences_with_exact_spans():
    # "The weather is fine today  I will go to the sea\tthen go home" (two spaces, then a tab)
    text = "วันนี้อากาศดีมาก  ฉันจะไปทะเล\tแล้วกลับบ้าน"
    assert sentence_spans(text) == [(0, 16), (18, 29), (30, 42)]
    assert sentences(text) == ["วันนี้อากาศดีมาก", "ฉันจะไปทะเล", "แล้วกลับบ้าน"]


def test_offsets_stay_absolute_in_a_sub_range():
    text = "Intro.\n\nวันนี้อากาศดีมาก ฉันจะไปทะเล"
    assert sentence_spans(text, 8) == [(8, 24), (25, 36)]


@pytest.mark.parametrize(
    "text",
    [
        "ในปี 2566 มีนักท่องเที่ยวมาก",  # a number after a Thai word
        "ปีนี้มี 3 คน",  # a number between Thai words
        "ในปี ๒๕๖๖ มีนักท่องเที่ยวมาก",  # Thai digits read as a number too
        "เราใช้ Python เขียนโปรแกรม",  # a Latin word between Thai words
        "มีของต่าง ๆ นานา",  # the repetition mark ๆ, written with a space around it
        "กรุงเทพฯ เป็นเมืองหลวง",  # ฯ abbreviates: the name goes on
        'เขาพูดว่า "สวัสดี" แล้วก็ไป',  # a quoted word
    ],
)
def test_a_space_next_to_a_number_a_latin_word_or_a_mark_goes_on(text):
    assert sentences(text) == [text]


def test_latin_sentences_in_thai_text_still_end_at_their_marks():
    text = "เขาพูดว่า Hello. It works. แล้วก็ไป"
    assert sentences(text) == ["เขาพูดว่า Hello.", "It works.", "แล้วก็ไป"]


def test_lao_is_not_cut_at_spaces():
    """Only Thai: Lao is left as it was (one sentence per paragraph but at its marks)."""
    text = "ພາສາລາວ ເປັນພາສາທາງການ"
    assert sentences(text) == [text]
