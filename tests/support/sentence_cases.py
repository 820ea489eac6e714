"""Tricky sentence-segmentation cases with their exact expected sentences.

Shared by ``tests/test_sentences.py`` (which asserts every one) and ``bench/bench_sentences.py``
(which counts how many each library gets right). Each case: (id, text, expected sentences).
Decisions that are ours (not universal) are noted beside the case.
"""

from __future__ import annotations

CASES: list[tuple[str, str, list[str]]] = [
    # --- titles and abbreviations -------------------------------------------------------
    (
        "fr-M.",
        "M. Dupont est arrivé hier. Il a vu Mme Martin.",
        ["M. Dupont est arrivé hier.", "Il a vu Mme Martin."],
    ),
    (
        "fr-Mme-MM",
        "Mme Martin et MM. Durand et Petit sont venus. Ils sont repartis.",
        ["Mme Martin et MM. Durand et Petit sont venus.", "Ils sont repartis."],
    ),
    (
        "fr-p.12",
        "Le tableau figure p. 12 du rapport. La suite est claire.",
        ["Le tableau figure p. 12 du rapport.", "La suite est claire."],
    ),
    (
        "en-Dr.",
        "Dr. Smith arrived late. He apologised to Mr. Jones.",
        ["Dr. Smith arrived late.", "He apologised to Mr. Jones."],
    ),
    (
        "en-e.g.",
        "Use a big city, e.g. Paris or Lyon, for the test. Then compare.",
        ["Use a big city, e.g. Paris or Lyon, for the test.", "Then compare."],
    ),
    (
        "en-i.e.",
        "The result, i.e. the final score, was 42. Nobody expected it.",
        ["The result, i.e. the final score, was 42.", "Nobody expected it."],
    ),
    (
        "en-U.S.",
        "She moved to the U.S. in 1990 and stayed. Her brother did not.",
        ["She moved to the U.S. in 1990 and stayed.", "Her brother did not."],
    ),
    (
        "en-etc.-mid",
        "We bought apples, pears, etc. for the party. It was fun.",
        ["We bought apples, pears, etc. for the party.", "It was fun."],
    ),
    (
        "en-etc.-end",
        "We bought apples, pears, etc. The party was fun.",
        ["We bought apples, pears, etc.", "The party was fun."],
    ),
    (
        "en-No.-fig.",
        "See No. 5 in Fig. 3 for details. The rest is in vol. 2 of the report.",
        ["See No. 5 in Fig. 3 for details.", "The rest is in vol. 2 of the report."],
    ),
    (
        "initials",
        "J. R. R. Tolkien wrote it in 1937. It sold well.",
        ["J. R. R. Tolkien wrote it in 1937.", "It sold well."],
    ),
    # --- a single letter at a sentence end (ours: a letter is an initial unless context says
    #     label or unit: a noun like "vitamine"/"annexe" or an article before it, a number
    #     before a unit letter) ----------------------------------------------------------------
    (
        "fr-vitamine-C",
        "Prenez de la vitamine C. Elle aide.",
        ["Prenez de la vitamine C.", "Elle aide."],
    ),
    (
        "fr-unit-h",
        "Le train part à 9 h. Il arrive à midi.",
        ["Le train part à 9 h.", "Il arrive à midi."],
    ),
    (
        "fr-unit-m",
        "Il mesure 3 m. Le suivant aussi.",
        ["Il mesure 3 m.", "Le suivant aussi."],
    ),
    (
        "letter-labels",
        "Voir l’annexe A. Elle détaille le plan B. Take vitamin C. It helps.",
        ["Voir l’annexe A.", "Elle détaille le plan B.", "Take vitamin C.", "It helps."],
    ),
    (
        "en-grade-after-article",
        "He got an A. She got a B. We visited the J. Paul Getty Museum. It was nice.",
        ["He got an A.", "She got a B.", "We visited the J. Paul Getty Museum.", "It was nice."],
    ),
    (
        "initials-mid-sentence",
        "Hier, Jean-Paul S. Martin a vu M. Dupont et J. R. R. Tolkien. Voilà.",
        ["Hier, Jean-Paul S. Martin a vu M. Dupont et J. R. R. Tolkien.", "Voilà."],
    ),
    (
        "fr-letter-before-number",
        "Voir l'article L. 123-4 du code, p. 12 et la classe A. 3 élèves. C'est tout.",
        ["Voir l'article L. 123-4 du code, p. 12 et la classe A. 3 élèves.", "C'est tout."],
    ),
    # --- numbers ------------------------------------------------------------------------
    (
        "decimals",
        "Growth was 3.5 percent in 2023. En France, elle était de 4,2 %. Tout va bien.",
        ["Growth was 3.5 percent in 2023.", "En France, elle était de 4,2 %.", "Tout va bien."],
    ),
    (
        "number-then-number",
        "The plant closed in 1990. 35 people lost their jobs.",
        ["The plant closed in 1990.", "35 people lost their jobs."],
    ),
    # --- URLs and e-mail ------------------------------------------------------------------
    (
        "url",
        "See https://example.com/a.b?x=1 for details. Then reply.",
        ["See https://example.com/a.b?x=1 for details.", "Then reply."],
    ),
    (
        "url-at-end",
        "The docs are at https://example.com/a.b?x=1. Read them first.",
        ["The docs are at https://example.com/a.b?x=1.", "Read them first."],
    ),
    (
        "email",
        "Write to jean.dupont@example.fr today. He answers fast.",
        ["Write to jean.dupont@example.fr today.", "He answers fast."],
    ),
    # --- ellipses (ours: an ellipsis ends a sentence only before a capital/other start) -------
    (
        "ellipsis-lower",
        "Wait... what? I don't know.",
        ["Wait... what?", "I don't know."],
    ),
    (
        "ellipsis-upper",
        "He hesitated... Then he left. Il hésita… Puis il partit.",
        ["He hesitated...", "Then he left.", "Il hésita…", "Puis il partit."],
    ),
    (
        "ellipsis-elision",
        "Il cite [...] Pasteur et Curie. Voilà.",
        ["Il cite [...] Pasteur et Curie.", "Voilà."],
    ),
    # --- quotes (the end mark inside a closing quote stays with the quote) -----------------
    (
        "guillemets",
        "Il a dit : « Je viens. » Puis il est parti.",
        ["Il a dit : « Je viens. »", "Puis il est parti."],
    ),
    (
        "guillemets-question",
        "« Vous venez ? » demanda-t-il. Elle hocha la tête.",
        ["« Vous venez ? » demanda-t-il.", "Elle hocha la tête."],
    ),
    (
        "curly-quotes",
        "She said, “It is over.” Then she left.",
        ["She said, “It is over.”", "Then she left."],
    ),
    (
        "straight-quotes",
        'He shouted "Stop!" Nobody moved. "Go," she said.',
        ['He shouted "Stop!"', "Nobody moved.", '"Go," she said.'],
    ),
    (
        "french-spacing",
        "Vraiment ? Oui ! C'est fini.",
        ["Vraiment ?", "Oui !", "C'est fini."],
    ),
    (
        "parenthesis",
        "(See the annex.) The rest follows.",
        ["(See the annex.)", "The rest follows."],
    ),
    # --- CJK (no space after the end mark) ----------------------------------------------------
    (
        "zh",
        "今天天气很好。我们去公园吧！你来吗？好的。",
        ["今天天气很好。", "我们去公园吧！", "你来吗？", "好的。"],
    ),
    (
        "ja-quote",
        "彼は「行きます。」と言った。それから出かけた。",
        ["彼は「行きます。」と言った。", "それから出かけた。"],
    ),
    (
        "zh-closing-quote",
        "他说：“好的。”然后走了。",
        ["他说：“好的。”", "然后走了。"],
    ),
    (
        "mixed-latin-cjk",
        "The title is 東京物語. 小津安二郎が監督した。Ozu made it in 1953.",
        ["The title is 東京物語.", "小津安二郎が監督した。", "Ozu made it in 1953."],
    ),
    # --- lists and line breaks -----------------------------------------------------------------
    (
        "numbered-list",
        "Steps:\n1. First open the box.\n2. Then read the manual.",
        ["Steps:", "1. First open the box.", "2. Then read the manual."],
    ),
    (
        "bullet-list",
        "Ingredients\n- two eggs\n- some flour",
        ["Ingredients", "- two eggs", "- some flour"],
    ),
    (
        "paragraph-break",
        "A title without a full stop\n\nThe first paragraph starts here. It ends here.",
        ["A title without a full stop", "The first paragraph starts here.", "It ends here."],
    ),
    (
        "wrapped-line",
        "This sentence is wrapped\nacross two lines. The next one is not.",
        ["This sentence is wrapped\nacross two lines.", "The next one is not."],
    ),
    (
        "markdown-heading",
        "# Introduction\nThis guide explains it.",
        ["# Introduction", "This guide explains it."],
    ),
    # --- German (nice to have) --------------------------------------------------------------
    (
        "de-z.B.",
        "Das gilt z. B. für Dr. Müller. Er kam am 3. Oktober an.",
        ["Das gilt z. B. für Dr. Müller.", "Er kam am 3. Oktober an."],
    ),
    (
        "de-bzw-Nr.",
        "Siehe Nr. 4 bzw. Abs. 2 des Vertrags. Das ist alles.",
        ["Siehe Nr. 4 bzw. Abs. 2 des Vertrags.", "Das ist alles."],
    ),
    # --- all-lowercase text (as in the Chroma finance corpus) -------------------------------
    (
        "lowercase-text",
        "as of december 31, 2017, the company had credits of $20 million. the company also had losses of approx. $3 million.",
        [
            "as of december 31, 2017, the company had credits of $20 million.",
            "the company also had losses of approx. $3 million.",
        ],
    ),
]

#: Language of the cases that are not English (peers that take a language get it).
LANG: dict[str, str] = {
    "fr-M.": "fr",
    "fr-Mme-MM": "fr",
    "fr-p.12": "fr",
    "fr-vitamine-C": "fr",
    "fr-unit-h": "fr",
    "fr-unit-m": "fr",
    "initials-mid-sentence": "fr",
    "fr-letter-before-number": "fr",
    "ellipsis-elision": "fr",
    "guillemets": "fr",
    "guillemets-question": "fr",
    "french-spacing": "fr",
    "zh": "zh",
    "ja-quote": "ja",
    "zh-closing-quote": "zh",
    "de-z.B.": "de",
    "de-bzw-Nr.": "de",
}

#: The cases the project requires (issue 2: titles, abbreviations, decimals, URLs, quotes, CJK;
#: plus i.e., etc., e-mail, numbered lists, initials, blank lines). The others test our
#: documented decisions (ellipses, Japanese quotative と, single newlines, Markdown, lowercase
#: text) or extras.
REQUIRED: frozenset[str] = frozenset(
    {
        "fr-M.",
        "fr-Mme-MM",
        "fr-p.12",
        "en-Dr.",
        "en-e.g.",
        "en-i.e.",
        "en-U.S.",
        "en-etc.-mid",
        "initials",
        "decimals",
        "url",
        "url-at-end",
        "email",
        "guillemets",
        "guillemets-question",
        "curly-quotes",
        "straight-quotes",
        "zh",
        "zh-closing-quote",
        "numbered-list",
        "paragraph-break",
    }
)
