"""Word lists that decide whether a "." ends a sentence (rule 6 of :mod:`explorer.text.sentences`).

No language code is needed: the lists of every language are merged. A word joins a list only
where it cannot be read otherwise in another language's sentence end (Italian "mio" is not the
German "Mio.", so number words are matched with their case).
"""

from __future__ import annotations


def _words(spaced: str) -> frozenset[str]:
    return frozenset(spaced.split())


#: Titles before a name, matched exactly (case matters: "MM." is Messieurs, "mm." millimetres).
TITLES = _words(
    "Mr Mrs Ms Mx Dr Prof Rev Hon Gen Col Capt Cpt Lt Sgt Gov Sen Rep St Ste Mt Messrs "
    "MM Mme Mmes Mlle Mlles Mgr Pr Hr Hrn Fr Dres Dipl.-Ing Dr.-Ing "
    # Spanish, Italian, Portuguese, Dutch, Polish, Czech, Russian (before a name, a street)
    "Sr Sra Srta Sres Dña Dra Lic Ud Uds Sig Sigg Dott Avv Geom Ing Profa Exmo Exma Dhr Mevr Mw "
    "Drs Ir dhr mevr mw hab inż mgr Mgr Bc Проф проф акад Акад доц ул пр пл им тов гр св "
    # lowercase titles, normal in Italian, Spanish and Portuguese prose ("il sig. Rossi",
    # "l'avv. Galli", "el sr. García"); not "on." (onorevole) nor "arch.", English sentence ends
    "sig sigg sig.ra sig.na dott dott.ssa avv ing geom prof prof.ssa dr dr.ssa sr sra srta dña dra"
)
#: Words that are (almost) never the last word of a sentence, matched in lowercase.
NEVER_FINAL = _words(
    "e.g i.e cf viz vs z.b u.a d.h o.ä bzw vgl ggf evtl sog inkl zzgl resp av apr env bd "
    "p.ej vid m.in np tzn tj tzw např bijv o.a d.w.z m.b.t t.a.v напр ср см т.е т.к"
)
#: Words before a number ("p. 12", "No. 5", "Nr. 4"), matched in lowercase when a number follows.
#: A word ending in "str" is a street ("Goethestr. 5", "Dorpsstr. 12") and needs no entry.
BEFORE_NUMBER = _words(
    "p pp no nos nr vol vols fig figs art arts ch chap sec sect eq eqs ref refs approx ca env "
    "abs tab tbl op n s t para par ex ext max min tel tél réf réfs num rev str jan feb mar apr jun jul "
    "aug sep sept oct nov dec janv févr fév avr juil déc "
    "pág págs núm cap pag pagg abb kap bd blz hfst str rys poz ust pkt rozdz obr nar стр рис табл гл ст илл "
    # "about": Spanish/Portuguese "aprox. 30", German "rd. 30", "ungef. 30", Dutch "ong. 30"
    "aprox rd ungef ong"
)
#: Of those, the ones a Roman numeral follows too ("sec. XIX", "vol. II", "cap. IV"); not "no"
#: ("No. I don't").
BEFORE_ROMAN = _words("sec sect vol vols ch chap cap capp kap bd tit lib tom pt")
#: Number words after a number ("3 Mio. Euro", "2 Mrd. Dollar", "5 Tsd. Einwohner", Spanish
#: "3 mill.", Italian "3 mln", "2 mld"), matched exactly (Italian "mio." is "my").
NUMBER_WORDS = _words("Mio Mrd Tsd mill mln mld")
#: Company forms after "Co." ("GmbH & Co. KG", "Co. Ltd"), matched exactly.
COMPANY_FORMS = _words("KG KGaA OHG oHG KEG Ltd LLC LLP LP Inc Pte Pty")
#: Doctorates' fields after "Dr." ("Dr. med. Weber", "Dr. rer. nat. Schulz"), in lowercase.
DOCTOR_FIELDS = _words("med jur phil nat rer dent vet oec pol theol habil sc techn agr paed univ mult")
#: In text without capitals, these continue a sentence even before a lowercase word.
ABBREV_LOWER = (
    frozenset(t.lower() for t in TITLES)
    | NEVER_FINAL
    | BEFORE_NUMBER
    | frozenset(t.lower() for t in NUMBER_WORDS)
    | _words("etc inc ltd co corp jr sr dept est al approx")
)
#: Nouns that name a thing by a letter ("vitamine C", "plan B", "annexe A", "class A"): after one,
#: a single capital letter + "." + a capitalised word ends the sentence (matched in lowercase).
#: After a Romance noun an adjective may come between ("zona climatica E", "classe energetica A").
LETTER_NOUNS = _words(
    "vitamine vitamines classe classes catégorie catégories type types groupe groupes sanguin plan "
    "plans annexe annexes option options point points partie parties section sections lettre "
    "lettres niveau niveaux phase phases étape étapes série séries modèle modèles version versions "
    "variante variantes zone zones bloc blocs colonne colonnes ligne lignes case cases rangée "
    "scénario scénarios hypothèse solution méthode programme projet régime permis taille format "
    "note notes grade grades équipe équipes poule division salle salles bâtiment bâtiments aile "
    "pavillon escalier entrée porte portes terminal quai voie voies lot lots cas hall tableau "
    "figure figures liste hépatite "
    "vitamin vitamins class category categories group groups plan appendix appendices annex part "
    "parts letter letters level levels step steps series model models variant variants block "
    "blocks column columns row rows size team teams room rooms building buildings wing floor gate "
    "gates platform track case table tables exhibit schedule form hepatitis blood "
    "klasse kategorie typ gruppe anhang punkt teil abschnitt buchstabe stufe schritt serie modell "
    "spalte zeile fall halle gebäude raum tor gleis bahnsteig anlage "
    # Italian
    "zona classi tipo tipi allegato allegati categoria categorie fascia fasce gruppo gruppi "
    "lettera punto punti comma commi sezione sezioni parte parti serie livello livelli fase fasi "
    "piano scala edificio palazzina blocco lotto vitamina modello versione opzione colonna riga "
    "tabella squadra aula settore epatite "
    # Spanish and Portuguese
    "zonas clase tipos anexo anexos categoría categorías grupo grupos letra letras puntos "
    "apartado sección secciones partes nivel niveles fases modelo versión opción columna fila "
    "tabla equipo bloque planta sala alínea "
    # Dutch
    "klassen bijlage bijlagen categorie groep groepen deel sectie reeks niveau fase versie kolom "
    "rij tabel figuur blok gebouw zaal"
)
#: Words between a letter noun and its letter that are not adjectives ("la zona di A. Rossi").
#: The adjective path also needs a sentence-starting word next: "the team captain A. Smith".
LINKING_WORDS = _words(
    "di del dello della dei degli delle da dal dalla de la le el los las des du van von der of "
    "per por para pour for con com with en in"
)
#: Articles: "an A. She got a B." -- a letter after an article ends the sentence when a word that
#: only starts sentences (:data:`SENTENCE_STARTERS`) follows; "the J. Paul Getty Museum" does not.
ARTICLES = _words("un une le la les du des a an the ein eine einen der die das den dem")
#: Capitalised function words that start sentences and are not surnames (matched exactly).
SENTENCE_STARTERS = _words(
    "Il Ils Elle Elles Je Tu Nous Vous On Ce Cela Ceci Ça Cet Cette Ces Le La Les Un Une Des Du "
    "Au Aux Mais Et Ou Donc Or Puis Ensuite Alors Enfin Si Quand Lorsque Pour Par Dans En Sur Avec "
    "Sans Lui Leur Mon Ma Mes Son Sa Ses Notre Nos Votre Vos Voici Voilà "
    "The A An It He She They We I You This That These Those There Then But And Or So If When While "
    "In On At For With His Her Its Their Our My Your "
    "Der Die Das Den Dem Ein Eine Er Sie Es Wir Ich Ihr Dann Aber Und Oder Wenn Im Am "
    "El Pero Luego Después Entonces Gli Poi Quindi Allora Dopo Het Een Maar Toen"
)
#: Single-letter units that end a sentence after a number: "à 9 h.", "3 m.", "5 g.", "2 l.", "10 s.",
#: and years: Polish "w 2020 r.", Russian "в 1990 г." (and Russian м, л, с, ч, т).
UNIT_LETTERS = frozenset("hmglstrгмлсчт")
#: Russian "и т. д.", "и т. п." ("and so on") end a sentence when a capital follows.
SO_ON = (("т.", "д"), ("т.", "п"))
#: Capital letters that are units after a number ("230 V.", "16 A.", "60 W.", "20 C."); when a
#: sentence-starting word follows they end the sentence. Not M ("en 1990 M. Le Pen") nor J.
UNIT_CAPITALS = frozenset("AVWNKTHFSLC")
#: German words after an ordinal whatever comes before it ("am 3. Oktober", "als 2. Sieger",
#: "im 2. Weltkrieg"): nouns that rarely start a sentence ("Mal" does: "Mal sehen").
GERMAN_ORDINAL_NEXT = _words(
    "Januar Jänner Februar März April Mai Juni Juli August September Oktober November Dezember "
    "Jahrhundert Jahrhunderts Sieger Siegerin Platz Platzes Stockwerk Etage Obergeschoss "
    "Auflage Liga Bundesliga Weltkrieg Weltkriegs Weltkrieges Runde Halbzeit Spieltag Quartal "
    "Halbjahr Semester Klasse Staffel Etappe Generation Instanz Lesung Kapitel Ausgabe"
)
#: German words before an ordinal ("zum 3. Mal", "die 5. Klasse", "am 2. Tag"), in lowercase.
GERMAN_ORDINAL_BEFORE = _words(
    "zum zur im vom beim dem den der die das jeden jedem jeder jedes seit ihrem ihren seinem seinen"
)
