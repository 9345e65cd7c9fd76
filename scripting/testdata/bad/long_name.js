defineTool({ name: "a_name_that_is_far_too_long_for_any_model_provider_to_accept_it_ok", description: "d", parameters: { type: "object" }, run() {} });
