"""What happens to the system during an episode: the seeded fault schedule (`fault_schedule`) and the
harmless changes shipped beside the faults (`change_stream`: the production stream's twins of the
faulty changes; `benign_edits`: the curated template commits of ids up to -v2).

May import: `core`, `catalog`, `metrics`.
"""
