"""The offline plan: run the real program under Pulumi's mocks, record every registration, judge it."""
