// arrival_forecast
