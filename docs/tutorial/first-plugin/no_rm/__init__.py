"""no-rm: the terminal tool may not delete recursively, except the paths you allow."""

import re

RECURSIVE_RM = re.compile(r"\brm\s+(?:-\w*[rR]\w*|--recursive)\s+(?P<target>[^\s;&|]+)")


def register(ctx):
    # Read once, when the plugin loads: plugins.entries.no-rm.settings.allow in config.yaml
    allowed = set(ctx.get_config("allow", []))

    def block_recursive_rm(tool_name, args, **kwargs):
        # Hermes passes every hook argument by keyword: **kwargs takes the ones not used here.
        if tool_name != "terminal":
            return None
        match = RECURSIVE_RM.search(args.get("command", ""))
        if match is None or match["target"] in allowed:
            return None
        return {
            "action": "block",
            "message": f"no-rm: deleting {match['target']} recursively is not allowed",
        }

    ctx.register_hook("pre_tool_call", block_recursive_rm)
