"""Small word lists for reading a statement without a parser (used by `subjects` and
`consolidation`): where the verb is, which words are stop words, which nouns name a person, and
which words say the same subject. English only; hand-made and deliberately short."""

from __future__ import annotations

import re


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


AUXILIARIES = _split(
    "is are was were be been being am has have had do does did will would shall should can could may might must "
    "isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't wouldn't can't cannot couldn't "
    "shouldn't mustn't gets got")
# Words that stand before a verb and end the subject ("The Berlin office now opens at 9").
PREVERBS = _split(
    "now never always still also just only actually recently currently usually often already finally sometimes "
    "rarely mostly really even seldom generally typically normally longer")
DETERMINERS = _split(
    "the a an my our your his her their its this that these those every each some any no another other which "
    "whose what")
PRONOUNS = _split("i we you they he she it there someone everyone nobody who whoever")
STOP = DETERMINERS | PRONOUNS | _split(
    "of in on at for to from with by about over under into onto after before since during until via per as than "
    "between across through behind within without and or but so nor yet also there here then now just only still "
    "again both either neither all most more less very quite too is are was were be been am it's that's what's "
    "one's 's not no never always")
# Acronyms that are common nouns ("the user's preferred IDE"), not names.
ACRONYMS = _split("ide api cli ui ux ci cd vpn url sdk os db sql cpu gpu ram ssd hdd pr qa ceo cto cfo coo hr it pm "
                  "eta faq pdf csv json html css http https dns tls ssl ssh lan wan ip id tv pc usb")
TITLES = _split("mr mrs ms miss dr prof sir dame coach aunt uncle grandma grandpa auntie saint st")

# Verbs that are seldom nouns: the first of them ends a statement's subject wherever it stands.
_VERBS = (
    "live prefer like love hate dislike enjoy want wish own speak manage approve read write drive sit draw "
    "affect depart expire belong contain include require receive send serve know think believe decide choose "
    "agree become seem appear remain stay keep hold take make give go come leave join migrate upgrade downgrade "
    "relocate rename replace reassign promote retire quit begin finish allow accept refuse avoid eat cook "
    "bake swim ride attend learn teach practise practice paint sing listen wear buy sell pay earn spend save "
    "borrow lend meet marry celebrate see look feel fit suit expect intend try pull merge fail succeed restart "
    "reboot rotate renew refresh reside sleep wake exist lack forget remember hire employ apply weigh grow "
    "shrink raise lower double triple halve respond reply arrive happen depend rely collect feed fly study "
    "travel commute visit cycle walk handle stand owe consider find tell ask say greet mention confirm "
    "obtain prepare add argue arrange bring calculate carry cause chase choose clean clear climb combine "
    "compare compete complain complete concern connect consist continue contribute convert correct create "
    "cry debug declare decline deliver describe deserve destroy determine develop die dig disagree disappear "
    "discover discuss divide enable encourage enforce ensure enter establish estimate evaluate examine exceed "
    "exclude execute expand explain explore express fetch fill follow forbid forgive gain gather generate get "
    "grab graduate grant guarantee hang hear hide ignore imagine implement improve indicate inform inherit "
    "insist install introduce invent invest investigate invite involve kill knit lay lie lift locate lose "
    "maintain mean melt monitor negotiate obey observe occur operate organise organize overlook participate "
    "perform persuade pick prefer pretend prevent proceed produce protect prove provide publish punish "
    "qualify reach realise realize recognise recommend recover reduce refer regret reject relax remain remind "
    "remove repair repeat represent rescue resign resolve restore reveal ring rise roll rush schedule seek "
    "select settle shake share shine shoot shout shut sink slide smile solve spread steal stick submit "
    "suffer suggest supply suppose surround survive suspect swap sweep swing talk tend thank throw tolerate "
    "translate treat understand unite unlock upload urge vanish wait warn wash welcome win wonder worry wrap "
    "reverse undo cancel postpone reschedule scale shorten lengthen extend adopt drop abandon")
# Verbs that are nouns as often ("runs", "logs", "reports"): in -s form they end the subject only
# when no auxiliary or surer verb follows ("Build logs for db-03 are kept" keeps "logs for db-03").
_AMBIGUOUS = (
    "run work use need report review test build deploy ship release push switch start end stop play train "
    "watch cost rent date turn plan store log list show set return call order record change update lag track "
    "target point route answer drop charge process load check block lock time limit rate help increase "
    "decrease cut scale hand front email text message water back sync move cover fund book page step lead "
    "host drink support fix crash pass open close bike launch design access alert approach attack bet bill "
    "board break brew budget catch chat claim coach comment commit contact control copy count cross dance "
    "deal demand dream dress edit escape exchange exercise experience export fall fight form guess hope hunt "
    "import jump judge land last link mark match matter measure mind miss mix need note notice object offer "
    "park pause permit place post present press print promise question race reach request rest risk sign "
    "smoke snow sort sound spell split state stay stress study supply surprise swim touch tour trade transfer "
    "trust type visit vote walk waste wave wish")
_IRREGULAR = (
    "went gone left took taken made gave given came kept held sold bought paid sent spent met led read wrote "
    "written drove driven sat drew drawn ate eaten drank drunk swam rode ridden began begun became chose chosen "
    "knew known thought taught brought broke broken fell felt flew flown forgot grew hid hit hung let lost put "
    "quit rose ran saw seen said set shut sang slept spoke spoken stood stuck threw understood woke wore won "
    "withdrew cut cost shone told found")


def _forms(base: str) -> set[str]:
    out = {base, base + "s", base + "ed", base + "d", base + "ing"}
    if base.endswith(("s", "x", "z", "ch", "sh", "o")):
        out.add(base + "es")
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        out |= {base[:-1] + "ies", base[:-1] + "ied"}
    if base.endswith("e"):
        out.add(base[:-1] + "ing")
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgklmnprt]", base):
        out |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    return out


def _inflect(bases: str) -> frozenset[str]:
    return frozenset(form for base in bases.split() for form in _forms(base))


AMBIGUOUS = _inflect(_AMBIGUOUS)
VERBS = (_inflect(_VERBS) | _split(_IRREGULAR)) - AMBIGUOUS
BASE_FORMS = _split(_VERBS) | _split(_AMBIGUOUS)

# Nouns for someone other than the owner: "the user's partner likes X" is not about the user.
PERSONS = _split(
    "partner wife husband spouse girlfriend boyfriend fiance fiancee sister brother sibling mother father mum mom "
    "dad parent son daughter child kid baby friend colleague coworker boss manager mentor neighbour neighbor "
    "cousin aunt uncle niece nephew grandmother grandfather grandma grandpa grandparent grandchild in-law "
    "brother-in-law sister-in-law mother-in-law father-in-law roommate flatmate housemate landlord landlady "
    "dentist doctor therapist lawyer accountant assistant cat dog pet team company employer family client "
    "teacher coach")
# Words that name one subject (stems): the first of each group stands for the group.
_SYNONYMS = (
    "role title position job", "home house flat apartment", "manager boss supervisor",
    "doctor gp physician", "partner spouse", "child kid children kids", "parent parents", "mother mum mom",
    "father dad", "database db", "repo repository", "server host", "standup stand-up", "email e-mail",
    "laptop notebook", "car vehicle", "phone mobile", "office workplace", "team squad")
SYNONYM = {word: group.split()[0] for group in _SYNONYMS for word in group.split()}
# Values that exclude each other: two statements that differ by them are not one statement said
# twice ("aisle seats" / "window seats", "vegetarian" / "vegan").
_CONTRASTS = (
    "vegetarian vegan pescatarian omnivore", "aisle window middle", "long short", "early late",
    "morning afternoon evening night", "hot cold warm", "light dark", "left right", "big small large tiny",
    "old new", "first last", "front back", "upper lower", "north south east west", "summer winter spring autumn",
    "weekday weekend", "day night", "internal external", "public private", "staging production prod dev",
    "primary replica secondary", "frontend backend", "inbound outbound", "min max minimum maximum",
    "input output", "upstream downstream", "half full", "junior senior staff principal lead",
    "hourly daily nightly weekly monthly quarterly yearly annual", "black white red blue green yellow orange "
    "purple pink grey gray brown silver gold", "tea coffee", "cat dog", "tabs spaces", "sweet savoury savory",
    "fast slow", "cheap expensive", "mac windows linux", "ios android", "paper digital", "online offline",
    "remote onsite in-person", "manual automatic", "synchronous asynchronous", "enabled disabled", "on off",
    "monday tuesday wednesday thursday friday saturday sunday",
    "january february march april may june july august september october november december")
CONTRAST = {word: index for index, group in enumerate(_CONTRASTS) for word in group.split()}
