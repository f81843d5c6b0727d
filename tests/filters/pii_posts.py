"""Realistic 100-300-word posts of our own Reddit-style sentences for the PII tests, one in ten
carrying a sentence of the PII table (tests/filters/data/pii_table.tsv)."""
from __future__ import annotations

import random

from tests.filters.pii_table import load_table

FILLER = [
    "I don't really know how to start this, so I'll just say it.",
    "It has been a rough few months and I feel like I'm running out of patience with everyone.",
    "My job keeps me busy but when I get home the apartment is so quiet that it hurts.",
    "We used to go hiking every weekend, and now we barely talk over dinner.",
    "Last night I stayed up until 3am scrolling through old photos from 2019.",
    "I keep telling myself that it's fine, that everyone goes through this.",
    "Honestly I am so tired of pretending to be okay at work.",
    "When I told my mom she just said I was overreacting, which made me feel even worse.",
    "The worst part is that I can't even explain why I feel this way.",
    "I moved to Chicago for college and never really made friends there.",
    "My therapist says I should write things down, so here I am posting on Reddit at midnight.",
    "Some days are better, like last Sunday when I finally cleaned my room and felt proud.",
    "Other days I can't get out of bed until noon and I hate myself for it.",
    "I'm 26 and I feel like everyone my age has their life together except me.",
    "We split the rent 50/50 but he never pays on time and it makes me anxious.",
    "I spent $400 on a trip to Denver that I didn't even enjoy.",
    "At Christmas my family acts like nothing happened, and I play along.",
    "My dog is the only reason I get up in the morning some weeks.",
    "I know this sounds dramatic, but I really don't see the point anymore.",
    "Anyway, thanks for reading this far if you did.",
    "I used to love reading, now I can't finish a single chapter without zoning out.",
    "He said he needed space and then posted pictures from a party the same night.",
    "I tried the Headspace app for a month and it helped a little.",
    "My grades dropped from a 3.8 to a 2.9 in one semester and my parents don't know.",
    "I keep replaying the conversation in my head and thinking of what I should have said.",
    "It's been 412 days since the accident and I still flinch at every car horn.",
    "The weird thing is I'm not even sad, I'm just numb.",
    "I started running again and did 5k in 31 minutes, which is slow but I'm happy about it.",
    "Every time my phone buzzes I hope it's him and it never is.",
    "My manager at Target is actually really supportive, which surprised me.",
    "I feel guilty for being jealous of my best friend's new relationship.",
    "We watched the game on Saturday and for a couple of hours I forgot about everything.",
    "I think I'm finally ready to ask for help, I just don't know where to start.",
    "TL;DR: I feel lost and I don't know what to do next.",
    "Edit: thank you all for the kind words, I didn't expect this many replies.",
    "Jake from my old team texted me out of nowhere and I didn't know how to reply.",
    "My sister Anna keeps inviting me to dinner and I keep making excuses.",
    "I'm scared that if I say something at Thanksgiving it will ruin the whole day.",
    "Posting from a throwaway because my family follows my main account.",
    "Sometimes I wonder if anyone would notice if I just stopped replying to texts.",
]


def make_posts(n: int, seed: int = 7) -> list[str]:
    """n posts of 100-300 words; one in ten has one PII sentence of the table."""
    rng = random.Random(seed)
    pii_sentences = [text for text, pii, _ in load_table() if pii]
    posts = []
    for _ in range(n):
        target, words, parts = rng.randint(100, 300), 0, []
        while words < target:
            s = rng.choice(FILLER)
            parts.append(s)
            words += len(s.split())
        if rng.random() < 0.1:
            parts.insert(rng.randrange(len(parts) + 1), rng.choice(pii_sentences))
        paragraphs = [" ".join(parts[i:i + 4]) for i in range(0, len(parts), 4)]
        posts.append("\n\n".join(paragraphs))
    return posts
