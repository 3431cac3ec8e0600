"""OpenRLHF's ``--train.agent_func_path``: rewardsmith environments as its agent.

OpenRLHF loads this file by path and builds its ``AgentExecutor``. Each dataset row's label
names the environment and the task (`openrlhf_agent.episode_label`). An environment failure
fails the rollout unless ``REWARDSMITH_ON_ENVIRONMENT_ERROR=zero`` is set in the rollout
workers' environment (Ray's ``runtime_env``), which records 0 and logs
``environment_error``. See `rewardsmith.environments.integrations.openrlhf_agent`.
"""

import os

from rewardsmith.environments.integrations.openrlhf_agent import agent_executor_class

AgentExecutor = agent_executor_class(os.environ.get("REWARDSMITH_ON_ENVIRONMENT_ERROR", "raise"))
