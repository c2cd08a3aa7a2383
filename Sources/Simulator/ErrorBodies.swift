/// OpenWeather's error bodies, byte for byte as the real API sends them
/// (see shared/openweather/fixtures).
enum ErrorBodies {
    static func body(for status: Int) -> (contentType: String, text: String) {
        switch status {
        case 400: (json, #"{"cod":"400","message":"wrong latitude"}"#)
        case 401:
            (
                json,
                #"""
                {"cod":401, "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 for more \#
                info."}
                """#
            )
        case 404: (json, #"{"cod":"404","message":"city not found"}"#)
        case 429:
            (
                json,
                #"""
                {"cod":429,\#
                "message":"Your account is temporary blocked due to exceeding of requests limitation of your \#
                subscription type. Please choose the proper subscription http://openweathermap.org/price"}
                """#
            )
        case 500...599:
            (
                "text/html",
                """
                <html><head><title>\(status) Bad Gateway</title></head><body><center><h1>\(status) Bad \
                Gateway</h1></center><hr><center>openresty</center></body></html>
                """
            )
        default: (json, #"{"cod":"\#(status)","message":"simulated error"}"#)
        }
    }

    /// One Call's answer to a key without its subscription (fixtures/error-401-onecall-no-subscription.json).
    static let oneCallNoSubscription =
        #"""
        {"cod":401,\#
        "message":"Please note that using One Call 3.0 requires a separate subscription to the One Call by Call plan. \#
        Learn more here https://openweathermap.org/price. If you have a valid subscription to the One Call by Call \#
        plan, but still receive this error, then please see https://openweathermap.org/faq#error401 for more info."}
        """#

    /// One Call's answer to a time it has no data for (the shape of fixtures/error-400-onecall-invalid-date.json).
    static let oneCallInvalidDate = #"{"cod":400,"message":"Invalid date format","parameters":["dt"]}"#

    /// One Call's answer to a parameter it cannot read, in the same shape.
    static func oneCallInvalid(_ parameter: String) -> String {
        #"{"cod":400,"message":"Invalid date format","parameters":["\#(parameter)"]}"#
    }

    /// One Call 4.0's answer to an alert ID it does not know: its errors' shape (the wording is not documented).
    static let oneCallAlertNotFound = #"{"cod":404,"message":"Alert not found","parameters":["alert_id"]}"#

    /// The zip endpoint's unknown code, unlike the weather's "city not found".
    static let zipNotFound = #"{"cod":"404","message":"not found"}"#

    static func wrongParameter(_ message: String) -> String {
        #"{"cod":"400","message":"\#(message)"}"#
    }

    static let json = "application/json; charset=utf-8"
}
