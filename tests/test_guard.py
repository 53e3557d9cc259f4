"""Guards: conversation, URLs, page phrases, text hygiene."""

from __future__ import annotations

import pytest

from eris_lab.catalog import Catalog, Tool
from eris_lab.guard import (
    MAX_SENTENCE_PARTS,
    SpellingIndex,
    catch_all_tools,
    clauses,
    clean_text,
    countdown_tools,
    fetch_tool,
    find_urls,
    is_conversational,
    is_greeting,
    known_words,
    lexical_terms,
    names_duration,
    page_phrase,
    sentence_parts,
    spelling_fixes,
    spelling_index,
    tool_keywords,
    unread_script,
    without_payload,
    without_venting,
    word_count,
)

KEYWORDS = tool_keywords(Catalog.from_names(["weather:current", "mail:read", "run_tests", "edit_file"]))


@pytest.mark.parametrize("text", ["hi", "Hi!", "  hello  ", "thanks", "Thank you!", "danke", "test", "Guten Morgen!",
                                  "ok", "", "Tell me a joke", "lol"])
def test_conversational(text):
    assert is_conversational(text, KEYWORDS)


@pytest.mark.parametrize("text", ["hey, fix the login bug", "weather?", "mails", "example.org",
                                  "hi there, what's the weather in Berlin tomorrow?", "run tests"])
def test_not_conversational(text):
    assert not is_conversational(text, KEYWORDS)


@pytest.mark.parametrize("text, request_", [
    ("compute 443 * 349", True),  # live_multiple_194-87-1, beside CalcProduct
    ("2+2", True),
    ("7 x 8", True),
    ("12/25", False),  # a date, not a division
    ("2026-12-01", False),
])
def test_a_short_arithmetic_expression_beside_a_calculator_is_a_request(text, request_):
    calculator = tool_keywords(Catalog.from_names(["CalcProduct", "weather:current"]))
    assert is_conversational(text, calculator) is not request_
    # beside tools that compute no arithmetic it stays conversation (BFCL live_irrelevance_271-57-6)
    assert is_conversational(text, tool_keywords(Catalog.from_names(["get_headway", "get_time_headway"])))


TYPO_KEYWORDS = tool_keywords(Catalog.from_names(["mail:check", "media:pause", "podcast:play", "tool:run", "weather:now"]))


@pytest.mark.parametrize("text", ["chek the wether", "paus the podcats", "wether now?", "pasue it"])
def test_a_typo_of_a_tool_keyword_is_still_a_request(text):
    # demo set, tag typo: "paus the podcats" was met with nothing (CONVERSATIONAL)
    assert not is_conversational(text, TYPO_KEYWORDS)


@pytest.mark.parametrize("text", ["cool", "so cool", "lol", "thanks a lot", "nice one"])
def test_short_chat_one_edit_from_a_short_keyword_stays_conversation(text):
    # "cool" is one edit from the keyword "tool", too short to be read as a typo of it
    assert is_conversational(text, TYPO_KEYWORDS)


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("Open https://example.org/changelog and summarise", ("https://example.org/changelog",)),
        ("see www.heise.de.", ("www.heise.de",)),
        ("check example.com/a?b=1, please", ("example.com/a?b=1",)),
        ("read notes/today.md and test.txt", ()),
        ("Schreibe die Datei /data/test.txt", ()),
        ("mail me at bob@example.com", ()),
        ("version 1.2.3 is out", ()),
    ],
)
def test_find_urls(text, urls):
    assert find_urls(text) == urls


def test_page_phrase_needs_a_page_word():
    assert page_phrase("please open the page") == "open the page"
    assert page_phrase("öffne die Seite bitte") == "öffne die Seite"
    assert page_phrase("open the door") == "" and page_phrase("you will open the way") == ""


def test_clean_text_drops_control_characters_and_cuts():
    assert clean_text("a\x00b\u200b c\n\n d\x7f") == "ab c d"
    assert clean_text("x" * 50, max_chars=10) == "x" * 8  # the last quarter ("xx") is in the start already
    assert clean_text("a b c d e f g h i j k l", max_chars=12) == "a b c d e ... k l"
    assert clean_text("alpha beta gamma delta epsilon", max_chars=12) == "alpha bet ... epsilon"


def test_fetch_tool_prefers_web_fetch_then_named_fetch():
    assert fetch_tool(Catalog.from_names(["web:fetch", "fetch_url"])) == "web:fetch"
    assert fetch_tool(Catalog.from_names(["git_fetch", "web_fetch"])) == "web_fetch"
    assert fetch_tool(Catalog([Tool(name="clock", description="x")])) == ""


# -- scripts without spaces (issue 16, bad input row 6) -------------------------------------------

@pytest.mark.parametrize(("text", "words"), [
    ("明天北京的天气怎么样", 5), ("天気", 1), ("明日の朝7時にアラームをセットしてください", 11), ("hello world", 2),
    ("ตั้งนาฬิกาปลุกตอนเจ็ดโมง", 6), ("set 闹钟 now", 3),
])
def test_word_count_counts_characters_in_scripts_without_spaces(text, words):
    assert word_count(text) == words


@pytest.mark.parametrize("text", [
    "明天北京的天气怎么样", "明日の朝7時にアラームをセットしてください", "天気は？", "내일 아침 7시에 알람 맞춰줘", "알람 맞춰줘",
    "Поставь будильник", "погода?", "ตั้งนาฬิกาปลุก", "Καιρός αύριο",
])
def test_requests_in_scripts_the_keywords_cannot_read_are_not_conversation(text):
    assert unread_script(text)
    assert not is_conversational(text, KEYWORDS)


@pytest.mark.parametrize("text", ["こんにちは！", "ありがとうございます。", "你好", "谢谢", "안녕하세요", "Привет!", "спасибо",
                                  "สวัสดีครับ", "ขอบคุณ"])
def test_greetings_in_other_scripts_are_conversation(text):
    assert is_greeting(text) and is_conversational(text, KEYWORDS)


def test_latin_text_with_accents_is_read():
    assert not unread_script("Wie wird das Wetter morgen in Köln?") and not unread_script("ça va, café crème")
    assert not unread_script("12:30 !!") and unread_script("今日の天気 ok") and not unread_script("天気 weather")


def test_lexical_terms_give_character_bigrams_for_cjk_and_words_otherwise():
    assert lexical_terms("明天天气") == ["明天", "天天", "天气"]
    assert lexical_terms("the Weather in BERLIN", stopwords={"the", "in"}) == ["weather", "berlin"]
    assert "알람" in lexical_terms("알람 맞춰줘") and "天" in lexical_terms("天 is sky")
    assert lexical_terms("a I") == []


# -- dialog shape -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "n"), [
    ("grab https://example.org/a.json and store it as Content/a.json", 2),
    ("check my mail, then set an alarm at 7; weather in Berlin", 3),
    ("download the report and then email it to Bob", 2),
    ("salt and pepper", 0), ("rock and roll music please", 0), ("what's the weather", 0),
    # bad input row 30: six requests, one of them after ", what's"
    ("check my email, add a calendar entry for Friday at 3pm, set an alarm at 7, what's the weather in "
     "Berlin, convert 100 dollars to euros, and read notes/today.md", 6),
    ("set an alarm at 7, how’s the traffic on the A9", 2),
])
def test_clauses_split_joined_requests_only(text, n):
    assert len(clauses(text)) == n


@pytest.mark.parametrize("text", ["they're going to ruin my whole weekend with this rain, what's it doing tomorrow?",
                                  "es regnet schon wieder, wie wird es morgen?"])
def test_a_question_that_points_back_is_read_with_what_it_points_at(text):
    # reported case route-01: "what's it doing tomorrow?" alone reads as news, with its antecedent as weather
    first, second = clauses(text)
    assert second.startswith(first) and second != first


def test_a_question_with_an_impersonal_it_asks_its_own_question():
    # round fourteen (2026-12-07): "what time is it there?" was read with the weather clause, and the
    # clock was left out of the offer
    assert clauses("what's the weather in Lyon and what time is it there?") == (
        "what's the weather in Lyon", "what time is it there?")


def test_a_url_to_keep_somewhere_is_a_download_and_a_keeping():
    # round fourteen: read whole, the fetch was forced and the document store demoted
    assert clauses("save www.example.org/guide.pdf into my documents") == (
        "save www.example.org/guide.pdf", "save it into my documents")
    assert clauses("send https://example.org to my boss") == ()  # no store verb: one request


@pytest.mark.parametrize("text, parts", [
    ("find flights from Berlin to Madrid on May 3 and a hotel near the Prado",
     ("find flights from Berlin to Madrid on May 3", "find a hotel near the Prado")),
    ("check my mail and the weather in Rome", ("check my mail", "check the weather in Rome")),
    ("I need flights and a hotel", ("I need flights", "a hotel")),  # no verb to share
    ("what is the weather and the time in Rome", ("what is the weather", "the time in Rome")),
    ("set an alarm for 7 and play some jazz", ("set an alarm for 7", "play some jazz")),  # its own verb
    # a name opens a statement, not a command (BFCL parallel_multiple_163 read "john the fund ...")
    ("John wants to invest in a fund and the fund has a yield of 7%",
     ("John wants to invest in a fund", "the fund has a yield of 7%")),
    ("weather in Rome and the time there", ("weather in Rome", "the time there")),  # "weather" is no verb
    # the verb after a greeting, as after "please" (one filler set, guard.LEADING_FILLER_RE)
    ("hey can you find flights to Rome and a hotel near the Colosseum",
     ("hey can you find flights to Rome", "find a hotel near the Colosseum")),
])
def test_a_part_without_a_verb_shares_the_first_parts_verb(text, parts):
    """Round eighteen's variants: "a hotel near the Prado" was scored without "find", and book_hotel
    led search_hotels."""
    assert clauses(text) == parts


def test_clauses_past_the_cap_stay_in_the_last_part():
    text = ", ".join(f"set alarm number {i}" for i in range(9))
    parts = clauses(text, max_clauses=4)
    assert len(parts) == 4 and parts[-1].endswith("set alarm number 8")  # nothing dropped


@pytest.mark.parametrize(("text", "parts"), [
    # BFCL parallel_multiple's shape: an opener, then one request a sentence
    ("Can you help me with a few things? First, I need to calculate the power of 7 raised to 3. Then, I want "
     "the probability of drawing a red card.",
     ("Can you help me with a few things?", "First, I need to calculate the power of 7 raised to 3.",
      "Then, I want the probability of drawing a red card.")),
    # a sentence that joins requests is split by clauses() too; a quoted message keeps its parts
    ('"Plan my day. Find the chess club in Boston and then the fastest route from New York."',
     ('"Plan my day.', "Find the chess club in Boston", 'find the fastest route from New York."')),  # its verb shared
    ("Hi. Find me a movie to watch? Thanks!", ("Find me a movie to watch?",)),  # short parts dropped
    ("what is the weather in Oslo", ()), ("Set an alarm for 6.30 tomorrow", ()),  # one sentence
    ("Dr. Smith needs the report. Send it to her by noon.", ("Smith needs the report.", "Send it to her by noon.")),
])
def test_sentence_parts_split_a_message_of_several_sentences(text, parts):
    assert sentence_parts(text) == parts


def test_sentence_parts_keep_the_first_ones_and_the_last_past_the_cap():
    text = " ".join(f"Set alarm number {i}." for i in range(100))
    parts = sentence_parts(text, max_parts=5)
    assert parts == (*(f"Set alarm number {i}." for i in range(4)), "Set alarm number 99.")  # the first and the last
    assert len(sentence_parts(text)) == MAX_SENTENCE_PARTS


@pytest.mark.parametrize(("text", "expected"), [
    ("set a timer for 10 minutes", True), ("in 5 min", True), ("half an hour", True), ("wake me in an hour", True),
    ("start the countdown", True), ("stell einen Timer auf zehn Minuten", True), ("20 Sekunden", True),
    ("remind me at 09:05", False), ("remind me to ring the vet on Thursday", False), ("on Friday at 9", False),
    ("every day at 7 am", False), ("remind me tomorrow morning", False),
])
def test_names_duration_tells_a_duration_from_a_point_in_time(text, expected):
    assert names_duration(text) is expected


def test_countdown_and_catch_all_tools_are_read_from_names_and_descriptions():
    catalog = Catalog([
        Tool(name="set_timer", description="Start a countdown for a duration."),
        Tool(name="egg", description="Count down three minutes for eggs"),
        Tool(name="set_alarm", description="Alarm that rings at a clock time."),
        Tool(name="execute_python", description="Run any Python code in the interpreter."),
        Tool(name="shell", description="Execute arbitrary shell commands on the host."),
        Tool(name="read_file", description="Read a file from the project folder."),
    ])
    assert countdown_tools(catalog) == {"set_timer", "egg"}
    assert catch_all_tools(catalog) == {"execute_python", "shell"}
    only = Catalog([Tool(name="run", description="Run any code")])
    assert catch_all_tools(only) == frozenset()  # nothing dedicated to prefer


@pytest.mark.parametrize("phrase", ["set an alarm for seven ", "wie wird das Wetter in Berlin? ", "ok "])
def test_a_cut_message_keeps_a_phrase_repeated_in_a_row_once(phrase):
    # bad input row 31: 115 kB repeating one request embedded as noise and got no tool
    text = clean_text(phrase * 5000, 4000)
    assert text.startswith(phrase.strip()) and len(text) < 3 * len(phrase) + 10


def test_a_message_under_the_limit_is_not_rewritten():
    text = "ha ha ha, set an alarm for seven"
    assert clean_text(text, 4000) == text


# -- spelling --------------------------------------------------------------------------------------

def _spelling_catalog():
    return Catalog([Tool(name="mail:check", description="check the email inbox for new email"),
                    Tool(name="agenda:list", description="list the open tasks on the to-do list"),
                    Tool(name="transit:departures", description="next bus departures from a station"),
                    Tool(name="media:play", description="play music or a podcast")])


@pytest.mark.parametrize("text, expected", [
    ("chek my emial", {"chek": "check", "emial": "email"}),  # a letter dropped, two swapped
    ("wats on my to do lsit", {"lsit": "list"}),  # "wats" is two edits from any catalogue word
    ("next bsu from the main staton", {"bsu": "bus", "staton": "station"}),  # a three-letter swap
    ("pley some musik", {"pley": "play"}),  # a letter changed; "musik" is a German word we know
    ("play the podcats", {"podcats": "podcast"}),  # the plural's "s" read as one edit: still the tool word
])
def test_spelling_fixes_one_edit_typos_to_catalogue_words(text, expected):
    assert spelling_fixes(text, spelling_index(_spelling_catalog()), known_words().__contains__) == expected


@pytest.mark.parametrize("text", [
    "check my email",  # nothing misspelt
    "mail it to Emial Zola",  # a capital after the sentence start: a name
    "list 'lsit' as written",  # a quoted literal
    "the vom tag",  # three letters: a swap only ("vom" -> "von" is a change)
    "bheck my inbox",  # the first letter is rarely the mistyped one
    "check my emails",  # a plural of a catalogue word
    "tasks for 2lsit",  # digits: an id
])
def test_spelling_leaves_known_words_names_quotes_and_ids_alone(text):
    assert spelling_fixes(text, spelling_index(_spelling_catalog()), known_words().__contains__) == {}


def test_spelling_tie_between_catalogue_words_fixes_nothing():
    index = spelling_index(Catalog([Tool(name="a:b", description="cart card")]))
    assert spelling_fixes("my carx", index) == {}  # one edit from both, each seen once
    assert spelling_fixes("my carx", spelling_index(Catalog([Tool(name="a:b", description="cart card card")]))) == {
        "carx": "card"}


def test_spelling_prefers_the_word_with_a_letter_left_out_to_a_more_frequent_one():
    # round twelve (2026-12-06, night): "timr" was fixed to "time", seen more often, and "set a timr
    # for 15 minuts" routed to a reminder
    index = spelling_index(Catalog([Tool(name="clock:now", description="the time, the time zone, local time"),
                                    Tool(name="clock:timer", description="start a countdown timer")]))
    assert spelling_fixes("set a timr", index, known_words().__contains__) == {"timr": "timer"}
    assert spelling_fixes("what tine is it", index, known_words().__contains__) == {"tine": "time"}


def test_no_spelling_fixes_in_a_message_read_by_another_languages_function_words():
    from eris_lab.guard import foreign_by_function_words

    assert foreign_by_function_words("wat voor weer wordt het morgen in Utrecht")  # "weer" is Dutch weather
    assert foreign_by_function_words("pon una alarma a las siete")
    for english_with_typos in ("chek wether tomorow", "set timr 15 minuts", "remnd me tomorow dentist"):
        assert not foreign_by_function_words(english_with_typos)  # foreign_language reads these by unknown words
    assert not foreign_by_function_words("wie wird das Wetter morgen")  # German is read
    # Romance articles and prepositions: this read German ("alle") and was never glossed
    assert foreign_by_function_words("Mandami un promemoria domani alle 9 per la riunione")
    assert not foreign_by_function_words("book a table at Al Forno")
    # Dutch "is" proves no English beside Dutch function words, but does alone (the records of round
    # thirteen: "who is shashi tej reddy" read foreign and escaped the relevance gate)
    assert foreign_by_function_words("Wat voor weer is het vandaag in Gent?")
    from eris_lab.guard import foreign_language

    assert not foreign_language("who is shashi tej reddy")


def test_no_spelling_fixes_in_a_message_read_by_letters_no_english_word_has():
    from eris_lab.guard import foreign_by_letters

    # round fourteen (2026-12-07): Turkish "hava" was fixed to "have"
    assert foreign_by_letters("Hava yarın nasıl olacak?")
    assert not foreign_by_letters("chek wether tomorow")  # typos add no accent
    assert not foreign_by_letters("book a table at the café for Zoë")  # English, two loanwords
    assert not foreign_by_letters("wie wird das Wetter morgen in München")  # German is read


@pytest.mark.parametrize(("text", "unread"), [
    ("Yarın hava nasıl?", True), ("Biraz caz çal", True),  # round fourteen: their cosines ranked memory tools
    ("turn off airpurifier", False), ("he's a walking calculator", False),  # English, a word unknown
    ("chek my emial", False), ("Wie kenne ich eigentlich Familie Schröder?", False),  # typos; German is glossed
])
def test_words_unread_needs_most_words_outside_the_vocabulary(text, unread):
    from eris_lab.guard import words_unread

    assert words_unread(text) is unread


@pytest.mark.parametrize(("text", "conversation"), [
    ("Spela lite jazz", False), ("Yarın hava nasıl?", False),  # round fourteen: requests were conversation
    ("tack så mycket", True), ("grazie mille davvero", True), ("kiitos oikein paljon", True),
])
def test_short_text_in_a_language_the_lab_cannot_read_is_conversation_only_as_thanks_or_greeting(text, conversation):
    assert is_conversational(text) is conversation


@pytest.mark.parametrize(("text", "vents"), [
    ("my week has been a total disaster and I'm exhausted", True),  # round fourteen: 8 to 14 tools
    ("I'm so stressed out and honestly losing my mind", True),
    ("my week has been a total disaster, can you clear my calendar?", False),  # it asks
    ("my laptop is broken", False),  # a problem, no feeling
    ("remeber that i hate olives", False),  # a request's verb misspelt (demo typo-020): no statement
    # round nineteen (2026-12-07): feelings in phrases, in French and German
    ("I'm so done with this semester", True),
    ("honestly I could cry", True),
    ("Ich bin heute total fertig", True),
    ("je suis complètement crevé ce soir", True),
    ("I'm so done with this essay, can you submit it?", False),
    ("Ich bin fertig, schick die Mail", False),
])
def test_only_vents(text, vents):
    from eris_lab.guard import only_vents

    assert only_vents(text) is vents


def test_a_word_with_an_accent_is_never_fixed_to_one_without():
    index = spelling_index(Catalog([Tool(name="a:b", description="das day days")]))
    assert spelling_fixes("buenos días amigo", index, known_words().__contains__) == {}


@pytest.mark.parametrize("text, duration", [
    ("set a timer for 15 minuts", True), ("30 secnds please", True), ("for 2 houres", True),
    ("15 min", True),
    ("at 5", False), ("at 5 minuts past", False), ("buy 3 houses", False), ("5 mines", False),  # "min" vs "mine"
])
def test_a_duration_unit_misspelt_by_one_edit_still_names_a_duration(text, duration):
    assert names_duration(text) is duration


def test_spelling_index_finds_one_edit_neighbours_without_scanning_the_vocabulary():
    index = SpellingIndex(Catalog([Tool(name=f"t:{i}", description=f"word{i} station") for i in range(2000)]))
    assert index.one_edit("staton") == ["station"] and index.one_edit("stations") == ["station"]
    assert index.one_edit("xyzzy") == []


@pytest.mark.parametrize("text, read", [
    ("email alice@example.org that the meeting moved", "email alice (an email address) that the meeting moved"),
    ("cc dave.smith@mail.example.co.uk and bob+x@b.io", "cc dave smith (an email address) and bob+x (an email address)"),
    ("no address here", ""), ("a lone @ sign, @handle", ""),
])
def test_read_addresses_reads_an_address_as_its_local_part(text, read):
    from eris_lab.guard import read_addresses

    assert read_addresses(text) == read


def test_sentence_parts_keep_a_repeated_sentence_once_and_the_last_part_past_the_cap():
    from eris_lab.guard import sentence_parts

    filler = "Here is some background about my week, which was long and tiring. " * 60
    parts = sentence_parts(filler + "Please set an alarm for 7 am tomorrow.")
    assert parts[-1] == "Please set an alarm for 7 am tomorrow." and len(parts) == len(set(parts)) <= 24
    many = " ".join(f"Sentence number {i} says something new." for i in range(40)) + " Finally read notes/today.md please."
    parts = sentence_parts(many, max_parts=5)
    assert len(parts) == 5 and parts[:4] == tuple(f"Sentence number {i} says something new." for i in range(4))
    assert parts[-1] == "Finally read notes/today.md please."


def test_clean_text_cut_keeps_the_start_and_the_end():
    from eris_lab.guard import clean_text

    text = "lorem ipsum dolor sit amet " * 400 + "please set an alarm for 7 am"
    cut = clean_text(text, 4000)
    assert len(cut) <= 4010 and cut.startswith("lorem ipsum") and cut.endswith("please set an alarm for 7 am")
    assert " ... " in cut and cut.split(" ... ")[1].split()[0] in ("lorem", "ipsum", "dolor", "sit", "amet")
    assert clean_text("short text", 4000) == "short text"


@pytest.mark.parametrize("text, small_talk", [
    ("how are you doing today?", True), ("Wie geht es dir heute?", True), ("hey, how are you?", True),
    ("hi there! what's your name", True), ("How's it going?", True), ("nice to meet you", True),
    ("how are you going to fix this", False), ("what can you do?", False), ("how are the markets doing today", False),
    ("how are you doing today? set an alarm for 7", False), ("hey", False), ("", False),
    ("thanks, that's all for now", True), ("good night, talk tomorrow", True), ("Danke, das wär's", True),
    ("that's all I need to book", False), ("see you tomorrow at the meeting", False),
])
def test_small_talk_is_a_whole_message_after_a_greeting(text, small_talk):
    from eris_lab.guard import is_conversational, is_small_talk

    assert is_small_talk(text) is small_talk
    if small_talk:  # conversation in any catalogue, in a dialog too
        assert is_conversational(text, {"weather", "alarm"}, follow_up=True)


def test_sentence_parts_leave_out_greetings_and_small_talk():
    from eris_lab.guard import sentence_parts

    assert sentence_parts("Hey, good morning. What's the weather in Berlin today?") == (
        "What's the weather in Berlin today?",)
    assert sentence_parts("Hi there, how are you doing? Set an alarm for 7. Then check my mail please.") == (
        "Set an alarm for 7.", "Then check my mail please.")


@pytest.mark.parametrize("names, fetcher", [
    (["duckduckgo", "scrape", "wikipedia"], "scrape"), (["web_search", "read_webpage"], "read_webpage"),
    (["get_weather", "get_url_content"], "get_url_content"), (["fetch_data", "web_fetch"], "web_fetch"),
    (["get_weather", "search", "read_file"], ""),  # reading a file is no page fetch
])
def test_fetch_tool_finds_a_page_reader_by_its_name(names, fetcher):
    from eris_lab.catalog import Catalog, tools_from_json
    from eris_lab.guard import fetch_tool

    assert fetch_tool(Catalog(tools_from_json([{"name": n, "description": n} for n in names]))) == fetcher


@pytest.mark.parametrize("text, read", [
    ("is there a video for that?", "is there a video?"), ("tell me more about this one", "tell me more one"),
    ("what about a workflow for this?", "what about a workflow?"), ("do it", ""), ("delete it", ""),
    ("for that", ""), ("set an alarm for 7", ""),
])
def test_without_pointers_drops_phrases_that_only_point_back(text, read):
    from eris_lab.guard import without_pointers

    assert without_pointers(text) == read


# -- small talk, writing requests, chat spellings, other languages (variants of route-03/08/14/20) --


@pytest.mark.parametrize("text, expected", [
    ("Thanks, that was really helpful!", True),
    ("thank you so much, you're the best", True),
    ("thanks again", True),
    ("never mind", True),
    ("Vielen Dank für deine Hilfe!", True),
    ("hey, how are you?", True),
    ("again", False),  # a tail alone asks for a repeat
    ("ok", False),  # a bare greeting word is is_greeting's
    ("thanks, now set an alarm", False),
    ("that was helpful, now check my mail", False),
    # French, Spanish, Italian, Dutch (a helper's variants of route-20, 2026-12-05: the roster was offered)
    ("Comment ça va aujourd'hui ?", True), ("Ça va bien, merci !", True), ("¿Qué tal estás hoy?", True),
    ("Come stai oggi?", True), ("hoe gaat het vandaag?", True),
    ("Comment ça va, quel temps fait-il à Lyon ?", False), ("today", False),
])
def test_small_talk_is_greeting_words_and_phrases_in_any_order(text, expected):
    from eris_lab.guard import is_small_talk

    assert is_small_talk(text) is expected


@pytest.mark.parametrize("text, keywords, expected", [
    ("tell me a bedtime story about a dragon", (), True),
    ("Erzähl mir einen Witz", (), True),
    ("Schreib mir ein Gedicht über den Herbst", (), True),
    ("can you sing me a lullaby", (), True),
    ("tell me a joke", ("joke",), False),  # a jokes API serves it
    ("write me an email to bob", (), False),
    ("tell me the weather", (), False),
])
def test_asks_for_writing(text, keywords, expected):
    from eris_lab.guard import asks_for_writing

    assert asks_for_writing(text, keywords) is expected
    assert is_conversational(text, keywords) is expected


@pytest.mark.parametrize("text, keywords, expected", [
    # a question about words: the model answers it (a helper's variants of quoted payloads, 2026-12-05)
    ("how do you say 'delete all my emails' in Italian?", (), True),
    ("translate 'set an alarm' to French", (), True),
    ("can you translate 'where is the station' into Spanish please", (), True),
    ("translate into German: the meeting is cancelled", (), True),
    ("what does 'carpe diem' mean?", (), True),
    ("what does ubiquitous mean", (), True),
    ("what's the French word for umbrella?", (), True),
    ("what is 'good night' in Japanese?", (), True),
    ("hey, how do you pronounce 'quinoa'?", (), True),
    ("What is the meaning of 'Hello' in French?", (), True),  # BFCL irrelevance_61
    ("Was bedeutet „Wecker stellen“ auf Englisch?", (), True),
    ("Wie sagt man Regenschirm auf Französisch?", (), True),
    ("Übersetze 'Guten Morgen' ins Englische", (), True),
    # a tool serves language questions: a request
    ("translate 'hello' to French", {"translate"}, False),
    ("what does 'ubiquitous' mean?", {"dictionary"}, False),
    # not (only) a question about words
    ("translate this email and send it to Bob", (), False),
    ("send 'how do you say hello in Italian' to Anna", (), False),
    ("what's the weather in French Polynesia?", (), False),
    ("what does my schedule look like tomorrow", (), False),
    ("what's the time in Japan?", (), False),
])
def test_asks_about_language(text, keywords, expected):
    from eris_lab.guard import asks_about_language

    assert asks_about_language(text, keywords) is expected
    assert is_conversational(text, keywords) is expected


def test_language_question_check_is_linear_on_long_input():
    from eris_lab.guard import asks_about_language

    assert not asks_about_language("translate " + "word " * 30000)
    assert not asks_about_language("how do you say " + "a " * 30000 + " in")


def test_chat_spellings_are_written_out_outside_paths_and_urls():
    assert clean_text("can u get me moar? pls") == "can you get me more? please"
    assert clean_text("open /tmp/u/notes.txt and https://example.org/u") == "open /tmp/u/notes.txt and https://example.org/u"
    assert clean_text("u-boat") == "u-boat"


@pytest.mark.parametrize("text, expected", [
    ("Lis le fichier /etc/hosts s'il te plaît", True),
    ("pon una alarma a las siete", True),
    ("a klient z nazwiskiem na Mey jest?", True),
    ("check weather Berlin", False),
    ("chek my emial", False),
    ("I want a refund, I was charged twice", False),
    ("Schreibe die Datei /data/test.txt mit dem Inhalt hallo.", False),  # German: the gloss reads it
    ("明天北京的天气怎么样", False),  # another script: unread_script's
])
def test_foreign_language(text, expected):
    from eris_lab.guard import foreign_language

    assert foreign_language(text) is expected


@pytest.mark.parametrize("text, expected", [
    ("Erinnere mich am Freitag daran, den Müll rauszubringen", False),  # "am" is no "a m(inute)"
    ("wake me at 7 am", False),
    ("set a timer for 5min", True),
    ("eine Minute", True),
    ("half an hour", True),
])
def test_number_words_stand_apart_from_their_unit(text, expected):
    assert names_duration(text) is expected


def test_small_talk_in_front_of_a_request_is_left_out():
    from eris_lab.guard import without_small_talk

    assert without_small_talk("hey, how are you? fix the login bug please") == "fix the login bug please"
    assert without_small_talk("thanks, that was great. now check my mail") == "now check my mail"
    assert without_small_talk("hi, fix the bug") == ""  # a bare greeting stays
    assert without_small_talk("how are you?") == ""


@pytest.mark.parametrize("text, rest", [
    ("good morning, fix the null pointer bug in auth.py", "fix the null pointer bug in auth.py"),
    ("morning! add milk to my shopping list", "add milk to my shopping list"),
    ("hi there. hello, set an alarm for 7", "set an alarm for 7"),  # every greeting in front goes
    ("Hallo, lies die Datei notes.md", "lies die Datei notes.md"),
    ("Guten Morgen, wie wird das Wetter morgen?", "wie wird das Wetter morgen?"),
    ("hey, good morning", ""),  # nothing but greetings: is_greeting's
    ("hi, how are you?", ""),  # small talk after it: conversation
    ("morning alarm at 7, please", ""),  # "morning" with no break after it is the subject
    ("fix it, hi, please", ""),  # a greeting only counts in front
    ("good morning", ""),
])
def test_a_greeting_in_front_of_a_request_is_read_apart(text, rest):
    """Variants of case route-14: the router scores the request without the greeting in front
    ("good morning, fix the bug in auth.py" was refused by the relevance gate)."""
    from eris_lab.guard import without_greeting

    assert without_greeting(text) == rest


def test_a_greeting_is_no_clause():
    assert clauses("hi there, set an alarm for 6") == ()
    assert clauses("Good morning, any new emails and set an alarm") == ("any new emails", "set an alarm")


def test_a_german_word_glossed_as_a_tool_keyword_makes_a_short_message_a_request():
    """'Spiel etwas Jazz' beside play_music was conversation (three words, no English keyword; a
    new user's trial); an English homograph of a gloss key ('regen') adds nothing."""
    from eris_lab.catalog import Catalog, tools_from_json
    from eris_lab.guard import is_conversational, tool_keywords

    catalog = Catalog(tools_from_json([{"name": "play_music", "description": "Play music on a speaker."},
                                       {"name": "get_weather", "description": "The weather in a place."}]))
    keywords = tool_keywords(catalog)
    assert {"spiele", "spiel", "musik"} <= keywords and "regen" not in keywords
    assert not is_conversational("Spiel etwas Jazz", keywords)
    assert not is_conversational("Musik bitte", keywords)
    assert is_conversational("Wie geht's?", keywords)


@pytest.mark.parametrize("text, read", [
    ("don't let me forget to pay the rent on the 1st", "remind me to pay the rent on the 1st"),
    ("Do not let me forget about the bins", "remind me about the bins"),
    ("make sure I don't forget my keys tomorrow", "remind me my keys tomorrow"),
    ("give me a heads-up on Thursday to submit the report", "remind me on Thursday to submit the report"),
    ("jog my memory about the tax return", "remind me about the tax return"),
    ("Vergiss nicht, mich am Montag zu erinnern", "remind me am Montag zu erinnern"),
    ("I'll never forget that day", ""), ("let me forget it", ""), ("set a timer", ""),
])
def test_reminder_idioms_are_read_as_remind_me(text, read):
    """Variants of case route-27: "don't let me forget ..." was refused (no word of it in
    add_reminder's text); the router scores this reading beside the message."""
    from eris_lab.guard import read_idioms

    assert read_idioms(text) == read


# -- quoted text a user hands over (a message's body, a task's title) --------------------------------

@pytest.mark.parametrize(("text", "read"), [
    # multi_turn_base_141 turn 4: every trading tool ranked above send_message
    ("Please send a message to her saying '100 shares of GOOG purchased, thoughts?'. I value their insights.",
     "Please send a message to her saying. I value their insights."),
    ('email Anna: "the meeting moved to 3pm, bring the slides"', "email Anna:"),
    ("tick off ‘pick up the dry cleaning’ please", "tick off please"),
    ("mark „die Steuer erklären“ als erledigt", "mark als erledigt"),
])
def test_without_payload_leaves_out_quoted_text_of_three_words_or_more(text, read):
    assert without_payload(text) == read


@pytest.mark.parametrize("text", [
    "copy 'TeamNotes.txt' into the archive",  # a short quote names an object
    "play 'Bohemian Rhapsody' by Queen",
    "read Kelly's report and don't skip the students' notes",  # apostrophes inside and after words
    '"Find the chess club in Boston and then the fastest route from New York."',  # the whole message quoted
    "what's the weather in Oslo",
    "'hello there my friend'",  # nothing would be left
])
def test_without_payload_keeps_names_apostrophes_and_a_message_quoted_whole(text):
    assert without_payload(text) == ""


@pytest.mark.parametrize(("text", "payloads"), [
    ('email Bob: "set an alarm for 7 and cancel my meetings"', ["set an alarm for 7 and cancel my meetings"]),
    ("what does 'delete all my emails' mean in German?", ["delete all my emails"]),
    # a name of three words or more is an object, not text handed over
    ("you are not sure if the 'King of Hearts' is in the deck", []),
    ("find a concert in 'New York, NY' that plays 'Rock' music", []),
    ("how tall is the 'Empire State Building'?", []),
    # a message wrapped in quotes: the quotes inside it are read, the wrapper is not a payload
    ('"send Bob a message saying \'hi there my friend\'"', ["hi there my friend"]),
    ('"Also, I am a 180 lbs, 5\'11" tall individual, can you predict my diabetes risk?"', []),
    ("play 'Bohemian Rhapsody' by Queen", []),
])
def test_quoted_payloads_are_text_handed_over_not_names(text, payloads):
    """Variants of the quoted-payload cases by a helper (2026-12-05); parallel_multiple_180's inch
    mark closed a span that its wrapper opened, and its first half was read as a payload."""
    from eris_lab.guard import quoted_payloads

    assert quoted_payloads(text) == payloads


@pytest.mark.parametrize(("text", "weather"), [
    ("how hot will it get on Saturday?", True), ("is it going to be sunny on Sunday?", True),
    ("is it going to be windy on Sunday?", True), ("do I need an umbrella tomorrow?", True),
    ("is it freezing outside?", True), ("should I wear a jacket today?", True), ("is it snowing in Oslo?", True),
    ("how humid is it in Miami?", True),
    ("it's too cold in the living room", False), ("make me a hot coffee", False), ("find hot dogs near me", False),
    ("query the Snowflake database", False), ("what's the weather in Oslo, is it sunny?", False),
    # round sixteen (2026-12-07): rain by another word, a clearing sky
    ("it's pouring in Leeds", True), ("ugh, it's pouring.", True), ("will it clear up by noon?", True),
    ("will it brighten up later in Bath?", True), ("it's pouring the coffee", False),
    ("it is pouring water everywhere", False),
    # round seventeen: ice and plurals
    ("will the roads be icy tomorrow?", True), ("do the kids need raincoats for school tomorrow?", True),
    # round eighteen: words of heat and cold ("sweltering" was none, and the gate refused the question)
    ("is Barcelona going to be sweltering in August?", True), ("will it be scorching at the beach on Saturday?", True),
    ("how muggy is it today", True), ("will it be nippy tonight", True),
    ("it's muggy in the gym", False),  # a room's air, no time or place outside
    ("the oven is boiling hot", False), ("is the soup boiling", False),
])
def test_a_weather_question_by_its_state_is_read_as_one(text, weather):
    """A helper's variants of case route-01 (2026-12-05): a bare weather description shares no
    word with "how hot will it get", so the politics tool stayed in the offer."""
    from eris_lab.guard import read_weather

    assert read_weather(text) == (f"{text} (weather forecast)" if weather else "")


def test_a_quoted_message_body_is_never_split_into_requests():
    text = "send Bob the message 'lunch is ready, and bring forks' and then set a timer for 5 minutes"
    assert clauses(text) == ("send Bob the message 'lunch is ready, and bring forks'", "set a timer for 5 minutes")
    text = "Forward 'I just placed the order. What do you think of it?' to Jane. Then book a table for two."
    assert sentence_parts(text) == ("Forward 'I just placed the order. What do you think of it?' to Jane.",
                                    "Then book a table for two.")


@pytest.mark.parametrize("text", ["delete 'report.txt'", "read report.txt", "open notes/today.md", "summarise q3.pdf"])
def test_a_file_name_makes_a_short_message_a_request(text):
    # two words and no tool keyword were conversation (a helper's variants, 2026-12-04)
    assert not is_conversational(text, KEYWORDS)


@pytest.mark.parametrize("text", ["ok thanks", "version 3.5?", "e.g. yes", "see you at 5.30"])
def test_a_dot_alone_is_no_file_name(text):
    assert is_conversational(text, KEYWORDS)


@pytest.mark.parametrize(("text", "read"), [
    # only the venting words of a statement go: the statement may hold the topic (route-01's rain)
    ("they're going to ruin my whole weekend with this rain, what's it doing tomorrow?",
     "they're going to my whole weekend with this rain, what's it doing tomorrow?"),
    ("ugh this airline is a total disaster, I'm absolutely furious - is BA283 delayed or not?",
     "this airline is a total I'm absolutely is BA283 delayed or not?"),
])
def test_without_venting_takes_the_feeling_out_of_statements_beside_a_request(text, read):
    assert without_venting(text) == read


@pytest.mark.parametrize("text", [
    "delete those stupid spam mails",  # a command keeps every word
    "I hate mondays",  # nothing but the statement: nothing to read instead
    "why is this so annoying?",  # a question
    "play some angry music, then set a timer",
])
def test_without_venting_leaves_commands_questions_and_lone_statements(text):
    assert without_venting(text) == ""


def test_a_fetch_tool_named_otherwise_is_found_by_its_description():
    catalog = Catalog([Tool(name="get_balance", description="Current balance of an account."),
                       Tool(name="web_search", description="Search the web for pages matching a query."),
                       Tool(name="read_document", description="Download and read a document or web page from a link.")])
    assert fetch_tool(catalog) == "read_document"
    assert fetch_tool(Catalog([Tool(name="web_search", description="Search the web for pages matching a query.")])) == ""


def test_venting_apart_splits_venting_from_the_request():
    from eris_lab.guard import venting_apart

    assert venting_apart("my boss is a tyrant and ruined my day; how long till the storm hits Boston?") == (
        "how long till the storm hits Boston?", "my boss is a tyrant and ruined my day;")
    assert venting_apart("I swear the whole country is falling apart. set a timer for 10 minutes")[0] == (
        "set a timer for 10 minutes")
    # a question that points back needs the statement (handed case route-01 itself)
    assert venting_apart("they're going to ruin my whole weekend with this rain, what's it doing tomorrow?") == ("", "")
    assert venting_apart("set a timer for 10 minutes") == ("", "")
    # a command keeps its own words, venting or not
    assert venting_apart("delete those stupid spam mails, they are ruining my inbox") == (
        "delete those stupid spam mails,", "they are ruining my inbox")


def test_read_existence_reads_a_search():
    from eris_lab.guard import read_existence

    assert read_existence("is there a program starting ZOK?") == "search for a program starting ZOK?"
    assert read_existence("do we have a customer called Mey?") == "search for a customer called Mey?"
    assert read_existence("Gibt es ein Programm namens ZOK?") == "search for ein Programm namens ZOK?"
    assert read_existence("there is a program starting ZOK") == ""
    assert read_existence("is there?") == ""


@pytest.mark.parametrize("text, expected", [
    ("where is parse_config defined?", True), ("who calls getUserById?", True), ("run main() again", True),
    ("set an alarm for 7", False), ("New York", False), ("e-mail Bob", False),
])
def test_names_code(text, expected):
    from eris_lab.guard import names_code

    assert names_code(text) is expected


def test_a_url_then_a_local_file_is_a_download_and_a_write():
    from eris_lab.guard import clauses

    assert clauses("pull down https://cdn.example.org/tex/rock.png into Content/Textures/rock.png") == (
        "pull down https://cdn.example.org/tex/rock.png", "save it to a file")
    assert clauses("download https://x.org/a.json to data/a.json") == (
        "download https://x.org/a.json", "save it to a file")
    assert clauses("send https://x.org to Bob") == ()
    assert clauses("open https://x.org/page in a new tab") == ()


def test_asking_tools_are_those_that_ask_the_user():
    from eris_lab.catalog import Catalog, Tool
    from eris_lab.guard import asking_tools

    catalog = Catalog([Tool(name="find_workflow", description="Find ready-made analysis workflows."),
                       Tool(name="ask_clarification", description="Ask the user what they mean when the request is unclear."),
                       Tool(name="ask_user", description="Ask the user a question."),
                       Tool(name="ask_price", description="Quote a price for a product.")])
    assert asking_tools(catalog) == frozenset({"ask_clarification", "ask_user"})


def test_language_tools_are_forced_for_a_question_about_words():
    from eris_lab.catalog import Catalog, Tool
    from eris_lab.guard import is_language_question, language_tools

    catalog = Catalog([Tool(name="translate_text", description="Translate text between languages."),
                       Tool(name="dictionary_lookup", description="Definitions of an English word."),
                       Tool(name="get_weather", description="The weather for a city.")])
    assert language_tools(catalog) == ("translate_text", "dictionary_lookup")
    assert is_language_question("what does 'serendipity' mean?") and is_language_question("define ubiquitous")
    assert is_language_question("how is 'receipt' spelled?")
    assert not is_language_question("define the interface") and not is_language_question("how is the weather in Rome?")


@pytest.mark.parametrize("text, expected", [
    ("which module defines class TokenBucket?", "search the code for TokenBucket"),
    ("Wo wird load_settings aufgerufen?", "search the code for load_settings"),
    ("where's the implementation of __init_subclass__ in our models?", "search the code for __init_subclass__"),
    ("who calls getUserById?", "search the code for getUserById"),
    ("where is HttpClient.send implemented?", "search the code for HttpClient.send"),
    ("where is Paris?", ""), ("who calls me?", ""), ("where is my car parked", ""),
    # our code in plain words (a helper's variants of route-14, 2026-12-05: the gate refused the first)
    ("where's our retry logic for the HTTP client?", "search the code for retry logic for the HTTP client"),
    ("where do we handle token refresh?", "search the code for handle token refresh"),
    ("where are the tests for the billing module?", "search the code for tests for the billing module"),
    ("where's our nearest office?", ""), ("where do we go for lunch?", ""),
])
def test_read_code_question(text, expected):
    from eris_lab.guard import read_code_question

    assert read_code_question(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("lint the project", True), ("countdown 90 seconds", True), ("meetings this Friday?", True),
    ("ratings", False), ("guide me", False), ("What is 2*3?", False), ("hi", False), ("Tell me a joke", False),
    ("set an alarm for 7 tomorrow morning please", False),  # not short: no conversation to begin with
    # a weather question by a state of it is scored whatever its first word (a helper's variants of route-01)
    ("is it nice out?", True), ("raining?", True), ("is it open?", False),
])
def test_only_short_marks_short_input_that_is_scored(text, expected):
    from eris_lab.guard import only_short

    assert only_short(text) is expected


def test_save_to_a_path_names_the_file_and_existence_covers_shops():
    from eris_lab.guard import clauses, read_existence

    assert clauses("pull down https://cdn.site.net/logo.svg and save it to assets/logo.svg")[1] == (
        "save it to a file")
    assert read_existence("do you sell waterproof hiking boots?") == "search for waterproof hiking boots?"


def test_opinions_vent_whatever_their_first_word():
    from eris_lab.guard import venting_apart

    assert venting_apart("politicians are all liars anyway. is it going to rain in Leeds tomorrow?") == (
        "is it going to rain in Leeds tomorrow?", "politicians are all liars anyway.")
    assert venting_apart("Der Schiedsrichter war blind! Bestell mir bitte Sushi.") == (
        "Bestell mir bitte Sushi.", "Der Schiedsrichter war blind!")
    # a statement that sets the topic is no venting ("I feel like listening to some tunes")
    assert venting_apart("Hey, I feel like listening to some tunes right now. Can you find me something from 2021?") == (
        "", "")


# -- a helper's routing variants, third stop of 2026-12-05: conversation the model answers itself ----------

@pytest.mark.parametrize("text", [
    "thanks for the help with the calendar earlier!", "thanks for the music tip yesterday!", "thanks anyway!",
    "wish me luck for my exam tomorrow", "no thanks, doesn't matter", "ach, vergiss es", "laisse tomber",
])
def test_thanks_for_something_and_forget_it_are_small_talk(text):
    from eris_lab.guard import is_conversational, is_small_talk

    assert is_small_talk(text)
    assert is_conversational(text, {"calendar", "music", "weather"}, follow_up=True)


@pytest.mark.parametrize("text", [
    "thanks, now set an alarm for 7", "thanks for the forecast, can you also check Berlin?",
    "thanks for the list but please delete the first one",
])
def test_thanks_with_a_request_after_it_is_no_small_talk(text):
    from eris_lab.guard import is_small_talk

    assert not is_small_talk(text)


@pytest.mark.parametrize("text, expected", [
    ("rewrite this sentence to sound more polite: send me the report now", True),
    ("summarize this paragraph: The meeting was moved to Friday.", True),
    ("give me three name ideas for a podcast about gardening", True),
    ("what's a good name for a cat?", True), ("let's play twenty questions", True),
    ("summarize my unread emails", False), ("list my ideas", False), ("let's play some jazz", False),
])
def test_work_the_model_does_itself_is_a_request_for_writing(text, expected):
    from eris_lab.guard import asks_for_writing

    assert asks_for_writing(text) is expected


@pytest.mark.parametrize("text", ["what rhymes with timer?", "give me a synonym for fast", "what's the opposite of cold?"])
def test_rhymes_and_synonyms_are_questions_about_words(text):
    from eris_lab.guard import is_language_question

    assert is_language_question(text)


@pytest.mark.parametrize("text, expected", [
    ("load Content/Data/enemies.json and list assets", "read the local file Content/Data/enemies.json"),
    ("Lies die Datei notizen/urlaub.md", "read the local file notizen/urlaub.md"),
    ("open https://example.org/a.json", ""), ("show me the weather in Berlin", ""),
])
def test_read_local_file(text, expected):
    from eris_lab.guard import read_local_file

    assert read_local_file(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("do I already have a reminder for the dentist?", "search for a reminder for the dentist?"),
    ("c'è un programma che si chiama ZOK?", "search for un programma che si chiama ZOK?"),
    ("do I need an umbrella?", ""),
])
def test_read_existence_in_more_forms(text, expected):
    from eris_lab.guard import read_existence

    assert read_existence(text) == expected


@pytest.mark.parametrize("word, vents", [
    ("wrecked", True), ("wrecking", True), ("ruining", True), ("furiously", True), ("hates", True),
    ("blinds", False), ("hello", False), ("messages", False), ("made", False),
])
def test_venting_words_are_read_by_their_stem(word, vents):
    """"honestly the politicians have wrecked everything, anyway is it going to be windy in Cardiff
    today?" kept the politics tool: "wrecked" was no venting word (a helper's variants of route-01,
    2026-12-05). "the blinds are stuck" is a smart-home request, not venting."""
    from eris_lab.guard import venting_apart, venting_word

    assert venting_word(word) is vents
    assert venting_apart("honestly the politicians have wrecked everything, anyway is it going to be windy "
                         "in Cardiff today?")[0] == "anyway is it going to be windy in Cardiff today?"


@pytest.mark.parametrize("text, asks", [
    ("I'm completely snowed under at work this week", False), ("time flies when you're having fun", False),
    ("my brain is foggy, remind me to drink water", True), ("is it going to rain?", True),
    ("I need a timer for 25 minutes", True), ("hey, check my mail", True), ("let's play some jazz", True),
    ("she stole my thunder again", False),
])
def test_asks_something_tells_a_request_from_a_bare_statement(text, asks):
    from eris_lab.guard import asks_something

    assert asks_something(text) is asks


@pytest.mark.parametrize("text, problem", [
    ("my laptop won't turn on", True), ("the app keeps crashing whenever I log in", True),
    ("I never got my package", True), ("I was billed for a plan I cancelled last month", True),
    ("my printer stopped working", True), ("book a meeting room for 3pm", False),
    ("what's the weather in Oslo?", False), ("turn on the kitchen light", False),
    # a fault of software or a machine in its own words (round nineteen's variants on a devops catalogue)
    ("report a bug: the CSV export cuts off after 1000 rows", True),
    ("the staging database is out of disk space again", True),
    ("the nightly build has been red for three days", True),
    ("the login request times out", True),
    ("hang the picture in the hallway", False), ("show me the build status", False),
    ("paint the fence red", False),
])
def test_reports_problem_reads_a_problem_in_other_words(text, problem):
    """A helper's variants of route-18 (2026-12-06): each problem report was refused beside a
    support tool whose text shares none of its words."""
    from eris_lab.guard import read_problem, reports_problem

    assert reports_problem(text) is problem
    assert bool(read_problem(text)) is problem


@pytest.mark.parametrize("text, foreign", [
    ("Mon train pour Lille est-il annulé ?", True),  # "mon", "est", "pour", "il" are MiniLM tokens
    ("Llama a mamá", True), ("Bel mama", True),  # two words, each a foreign word with a gloss
    ("what is the weather in Los Angeles", False), ("tell me about El Paso and Las Vegas", False),
    ("lamp", False), ("set timer", False), ("train volume", False),
])
def test_foreign_function_words_and_two_glossed_words_read_foreign(text, foreign):
    from eris_lab.guard import foreign_language

    assert foreign_language(text) is foreign


def test_canned_reply_tools_are_read_from_the_description():
    from eris_lab.catalog import Catalog, Tool
    from eris_lab.guard import canned_reply_tools

    catalog = Catalog([Tool(name="search_recipes", description="Search cooking recipes by dish."),
                       Tool(name="dietary_disclaimer", description="Canned reply explaining that the assistant gives "
                                                                   "no medical or dietary advice."),
                       Tool(name="show_help", description="Show the list of things the bot can do.")])
    assert canned_reply_tools(catalog) == {"dietary_disclaimer"}


@pytest.mark.parametrize("text,unread", [
    ("peru se palaveri", True),  # Finnish
    ("poista tämä muistutus", True),  # Finnish with letters mostly_german takes for German
    ("töröld a második emlékeztetőt", True),  # Hungarian
    ("hapus email yang kedua", True),  # Indonesian
    ("διάγραψε το δεύτερο", True),  # another script
    ("kiitos oikein paljon", True),  # Finnish thanks: after a listing the listed tools are offered, and the model may answer
    ("kiitos paljon", False),  # two words say too little
    ("delete the second one", False),
    ("delete second", False),  # keyword style, every word in the English vocabulary
    ("lösche den zweiten Termin", False),  # German is read
    ("thanks a lot", False),
])
def test_unread_language_is_neither_english_nor_german(text, unread):
    """The reading of policy._pairing_on_last (a helper's variants v11, 2026-12-06)."""
    from eris_lab.guard import unread_language

    assert unread_language(text) is unread


@pytest.mark.parametrize("text", [
    "You're a lifesaver!", "You're a lifesaver, thanks a million!", "you are so helpful", "ur a star",
    "you're a great help, thanks", "du bist echt klasse", "thanks a million",
    "you are incredibly helpful, thank you", "You've been so helpful today",  # round thirteen
])
def test_a_remark_about_the_assistant_is_small_talk(text):
    """Round twelve's variants of route-20 (2026-12-06, night): offered 14 tools."""
    from eris_lab.guard import is_small_talk

    assert is_small_talk(text)


@pytest.mark.parametrize("text", [
    "you're a lifesaver, set a timer", "you're wrong, the meeting is at 3", "thanks a bunch, now set an alarm",
    "you are the best assistant ever",  # more than one word after "the best": not read, the gate judges it
])
def test_a_remark_with_anything_after_it_is_no_small_talk(text):
    from eris_lab.guard import is_small_talk

    assert not is_small_talk(text)


@pytest.mark.parametrize("text, wanted", [
    ("don't email him, just remind me to call Peter tomorrow at 5", "remind me to call Peter tomorrow at 5"),
    ("don't delete the email from Sarah, just move it to the archive", "move the email from Sarah to the archive"),
    ("I don't want to cancel, just tell me when it arrives", "tell me when it arrives"),
    ("move it to the archive, don't delete it", "move it to the archive"),
    ("no need to book, just check the price", "check the price"),
    ("not the email, the calendar entry", "the calendar entry"),
    # nothing to take out: a request in a negation's words, a message that only negates, no negation
    ("don't forget to call mom, remind me at 5", ""), ("don't send it", ""), ("never mind, set an alarm", ""),
    ("I don't know, what's the weather?", ""), ("delete it, then list my files", ""),
    # round thirteen: the object takes the request's pronoun; pieces that set something aside go
    ("don't archive the email from Tom, delete it", "delete the email from Tom"),
    ("don't cancel the meeting with Bob, just push it to Friday", "push the meeting with Bob to Friday"),
    ("don't delete the invoice, just archive it", "archive the invoice"),
    ("please don't turn the lights off, turn the heating up to 21", "turn the heating up to 21"),
    ("don't turn the lights off, just dim them", "dim the lights"),
    ("instead of emailing him, remind me to call Peter", "remind me to call Peter"),
    ("forget the email, just remind me to call Peter", "remind me to call Peter"),
    ("don't worry about the lights, just play some jazz", "play some jazz"),
    # round fourteen: "rather than", before the request or closing it
    ("rather than a timer, remind me at 4pm to stretch", "remind me at 4pm to stretch"),
    ("remind me at 4pm to stretch rather than a timer", "remind me at 4pm to stretch"),
    ("text Anna instead of emailing her", "text Anna"),
])
def test_what_a_message_says_not_to_do_is_left_out_of_the_request(text, wanted):
    """Round twelve's variants (2026-12-06, night): the negated tool led the offer."""
    from eris_lab.guard import without_negated

    assert without_negated(text) == wanted


@pytest.mark.parametrize("text, reports", [
    # round fifteen (2026-12-07): a report of something done asks for nothing
    ("I already set an alarm for six, no worries", True),
    ("I paid the electricity bill on Monday", True),
    ("we moved the team offsite to next Thursday last week", True),
    ("just finished reading the article you fetched for me earlier", True),
    ("the timer already went off, the pasta's done", True),
    ("I've booked the flight", True),
    ("Ich habe den Wecker für morgen schon gestellt", True),
    # a command that shares a past form, a wish, a problem, something that came to the user, a question
    ("just put 'renew passport' on my to-do list", False),
    ("just set a timer for 5 minutes", False),
    ("I need a timer", False),
    ("I wanted to ask about the weather", False),
    ("I forgot my password", False),
    ("I locked myself out of my account", False),
    ("I got an email from Bob", False),
    ("I paid the bill twice, can you refund one?", False),
    ("I already set the alarm, but could you also start a 10 minute timer?", False),
    ("my package never arrived", False),
    # round sixteen (2026-12-07): no subject but a time that is over; a thing's state, no determiner
    ("paid the gas bill this morning", True),
    ("booked the hotel yesterday", True),
    ("sent the invoice to Anna last week", True),
    ("finished the report an hour ago", True),
    ("tea's made", True),
    ("bills are paid", True),
    ("sent emails from last week", False),
    ("booked flights since last month", False),
    ("pay the gas bill this morning", False),
    ("booked the hotel yesterday?", False),
    ("scheduled the meeting yesterday, can you move it to Friday?", False),
    ("what's done", False),
    # round seventeen (2026-12-07): "already" or "myself" after the object, a time as a clause,
    # "got X sorted", a state with its time, German without a subject, French
    ("moved the standup to Thursday already", True),
    ("cancelled the 3pm myself, no action needed", True),
    ("locked it when I parked, no need to check", True),
    ("finally emptied my inbox last night", True),
    ("got the alarm sorted for tomorrow, cheers", True),
    ("dinner's booked for 8, all good", True),
    ("Hab den Termin gestern schon abgesagt", True),
    ("J'ai déjà mis le réveil pour demain, merci", True),
    ("move the standup to Thursday already", False),
    ("delete them already!", False),
    ("got the alarm sorted?", False),
    ("dinner's booked for 8, can you remind me at 7?", False),
    ("J'ai oublié mon mot de passe", False),
    ("Ich habe eine Frage zum Angebot", False),
    # round eighteen (2026-12-07): a remark on how things stand after the report, a thing come
    ("already preheated the oven, it's at 200 now", True),
    ("I picked my seat already, 12C", True),
    ("the grocery order arrived an hour ago, all good", True),
    ("my parcel finally showed up", True),
    ("already preheated the oven, is it at 200 now?", False),
    ("the parcel arrived, can you track the other one", False),
    ("the package arrived damaged", False),
    ("my order arrived yesterday but the eggs are broken", False),
    ("I picked my seat already, change it to 12C", False),
    ("I paid the gas bill, cancel", False),  # a bare command after the report
    # round nineteen (2026-12-07): a weekday or an afternoon gone by, something come, German participles
    # without "ge"
    ("returned all my library books on Monday", True),
    ("mowed the lawn myself on Saturday", True),
    ("finally cleared my to-do list this afternoon", True),
    ("the seeds came yesterday, all fine", True),
    ("Ich habe die Mail schon beantwortet", True),
    ("picked up my repeat prescription from the chemist this morning", True),  # a place after "from"
    ("already ran the full test suite, all green", True),
    ("checked the logs earlier, nothing suspicious", True),
    ("checked the logs earlier, anything suspicious?", False),
    ("remind me on Monday", False),
    ("return the library books on Monday", False),
    ("the seeds came in damaged", False),
    ("the results came in today, can you summarise them?", False),
    ("Ich habe eine Frage zu verschiedenen Kursen", False),  # "verschiedenen" closes no clause
])
def test_a_report_of_something_done_asks_for_nothing(text, reports):
    from eris_lab.guard import only_reports_done

    assert only_reports_done(text) is reports


@pytest.mark.parametrize("text, plain", [
    ("would you mind awfully removing the second one?", "remove the second one?"),
    ("do you mind crossing off the milk one", "cross off the milk one"),
    ("would you mind dropping the 3pm one", "drop the 3pm one"),
    ("remove the second one", ""),
])
def test_a_request_put_as_would_you_mind_is_read_by_its_bare_verb(text, plain):
    from eris_lab.guard import plain_gerund

    assert plain_gerund(text) == plain


@pytest.mark.parametrize("text, main_clause", [
    ("if the dentist is still on Friday, move it to Monday", "move it to Monday"),
    ("wenn es morgen regnet, erinnere mich an den Schirm", "erinnere mich an den Schirm"),
    ("if it rains", ""),
    ("move it to Monday if the dentist is still on Friday", ""),
])
def test_a_condition_in_front_is_set_apart_from_the_request(text, main_clause):
    from eris_lab.guard import without_condition

    assert without_condition(text) == main_clause


@pytest.mark.parametrize("text, small_talk", [
    ("thanks, that reminder was perfect", True),
    ("the summary was really helpful", True),
    ("sorry to bother you", True),
    ("that reminder was perfect, now set another for 8", False),
    ("the reminder is wrong", False),
    # round sixteen (2026-12-07): how it went, praise with its object, a session's closing
    ("the timer worked perfectly", True),
    ("the payment went through, thanks", True),
    ("nice work with the playlist", True),
    ("great job yesterday", True),
    ("that's all i needed", True),
    ("all sorted, thanks!", True),
    ("all done", True),
    ("the timer worked perfectly, now set another one", False),
    ("the payment went through to which account?", False),
    ("great, now play the playlist", False),
    ("sorted by date", False),
    # round seventeen (2026-12-07): longer praised things, idioms of how it went, German; and the
    # guards: a request after praise of its object, a negated "on time"
    ("the playlist you put on was spot on", True),
    ("your summary of my inbox this morning was a lifesaver", True),
    ("cheers, the alarm woke me right on time", True),
    ("that currency conversion came in really handy", True),
    ("the mail you sent for me went down well", True),
    ("that lasagne recipe was a hit with the kids", True),
    ("Danke, der Timer hat super funktioniert", True),
    ("just wanted to say the reminder about the dentist worked", True),
    ("the navigation got me there in no time, great stuff", True),
    ("great job on the playlist, play it again", False),
    ("nice work with the playlist, now skip it", False),
    ("the alarm didn't go off on time", False),
    ("the meeting you set was at the wrong time", False),
    # round eighteen (2026-12-07): praise of a dish, who enjoyed it, the closings of an evening
    ("that soup recipe was a triumph, my family loved it", True),
    ("the lasagne was delicious", True),
    ("everyone enjoyed it, thanks", True),
    ("what a lovely chat, have a good evening", True),
    ("nice talking to you, enjoy your weekend", True),
    ("the kids loved it, can you save the recipe", False),
    ("the recipe was a success, now scale it for 10", False),
    ("have a good evening and set an alarm for 7", False),
])
def test_praise_of_what_was_done_and_an_apology_are_small_talk(text, small_talk):
    from eris_lab.guard import is_small_talk

    assert is_small_talk(text) is small_talk


@pytest.mark.parametrize("text, keywords, conversational", [
    ("12 km in miles?", {"convert", "units"}, False),
    ("150 USD to EUR", {"convert", "currency"}, False),
    ("12 km in miles?", {"weather"}, True),  # no converter: still short talk
    ("ok see you", {"convert"}, True),
])
def test_a_quantity_asked_in_another_unit_is_a_request_beside_a_converter(text, keywords, conversational):
    from eris_lab.guard import is_conversational

    assert is_conversational(text, keywords) is conversational


@pytest.mark.parametrize("text, writing", [
    # round seventeen's guards (2026-12-07): a request after a request for writing was conversation
    ("tell me a joke and then set an alarm for 7", False),
    ("tell me a joke, then remind me at 5 to call Mum", False),
    ("write a haiku and email it to Jo", False),
    ("Erzähl mir einen Witz und stell einen Wecker für 7", False),
    # more of the writing, or its style, is still writing
    ("tell me a story about a dragon and a princess", True),
    ("tell me a joke and make it funny", True),
    ("tell me a joke and a riddle", True),
    ("Erzähl mir einen Witz und mach ihn lustig", True),
    ("write me a poem, thanks so much", True),
])
def test_a_request_after_a_request_for_writing_is_a_tool_s(text, writing):
    from eris_lab.guard import asks_for_writing

    assert asks_for_writing(text) is writing


@pytest.mark.parametrize("text, plain", [
    # round seventeen (2026-12-07): a long polite wrapper hid the verb from the pairing
    ("I'd really appreciate it if you could remove the second one", "remove the second one"),
    ("would you be so kind as to remove the second one", "remove the second one"),
    ("if you could just drop the 3pm", "drop the 3pm"),
    ("remove the second one", ""),
])
def test_a_polite_wrapper_is_read_as_its_bare_verb(text, plain):
    from eris_lab.guard import plain_gerund

    assert plain_gerund(text) == plain


def test_a_mistyped_ordinal_is_never_fixed_to_a_catalogue_word():
    """Round seventeen (2026-12-07): "secnd" was fixed to "send", and the mail tools led a
    follow-up after a listing."""
    index = spelling_index(Catalog([Tool(name="mail:write", description="send an email"),
                                    Tool(name="agenda:remove", description="delete a reminder")]))
    assert spelling_fixes("pls delte the secnd one", index) == {"delte": "delete"}
    assert spelling_fixes("pls delte the thrid one", index) == {"delte": "delete"}
    assert spelling_fixes("sned an email", index) == {"sned": "send"}


def test_a_hyphenated_keyword_is_read_whole():
    """Round eighteen's variants: "list my to-dos" was conversation: "to-do" was read as "to" and "do"."""
    from eris_lab.guard import is_conversational

    assert is_conversational("list my to-dos", {"to-do", "agenda"}) is False
    assert is_conversational("list my to-dos", {"agenda"}) is True  # no such keyword: short talk as before
