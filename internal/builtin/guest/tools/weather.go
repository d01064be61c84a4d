package tools

import (
	"hash/fnv"
	"strings"
)

// The test-weather tools answer with mock data: the same city always gets
// the same weather, so tests and demos are repeatable. Nothing is fetched.

var conditions = []string{"sunny", "partly cloudy", "cloudy", "light rain", "rain", "thunderstorms", "snow", "fog", "windy"}

type cityArgs struct {
	City  string `json:"city"`
	Days  *int   `json:"days"`
	Units string `json:"units"`
}

// Weather is get_weather's result.
type Weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Units       string  `json:"units"`
	Conditions  string  `json:"conditions"`
	Humidity    int     `json:"humidity"`
	WindSpeed   float64 `json:"wind_speed"`
	Mock        bool    `json:"mock"`
}

// Day is one day of a forecast.
type Day struct {
	Day        int     `json:"day"`
	High       float64 `json:"high"`
	Low        float64 `json:"low"`
	Conditions string  `json:"conditions"`
	Precip     int     `json:"precipitation_chance"`
}

// Forecast is get_forecast's result.
type Forecast struct {
	City     string `json:"city"`
	Units    string `json:"units"`
	Forecast []Day  `json:"forecast"`
	Mock     bool   `json:"mock"`
}

func seed(city string, salt uint32) uint32 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(strings.TrimSpace(city))))
	return h.Sum32() ^ (salt * 2654435761)
}

func checkCity(a cityArgs) (string, string, error) {
	city := strings.TrimSpace(a.City)
	if city == "" {
		return "", "", invalid("city is empty: name a city, e.g. Paris")
	}
	units := a.Units
	if units == "" {
		units = "celsius"
	}
	if units != "celsius" && units != "fahrenheit" {
		return "", "", invalid("units %q: use celsius or fahrenheit", a.Units)
	}
	return city, units, nil
}

func temp(c float64, units string) float64 {
	if units == "fahrenheit" {
		c = c*9/5 + 32
	}
	return float64(int(c*10)) / 10
}

// GetWeather is test-weather's get_weather.
var GetWeather = wrap(func(a cityArgs) (Weather, error) {
	city, units, err := checkCity(a)
	if err != nil {
		return Weather{}, err
	}
	s := seed(city, 0)
	return Weather{
		City: city, Units: units, Mock: true,
		Temperature: temp(float64(int(s%40))-5, units),
		Conditions:  conditions[s%uint32(len(conditions))],
		Humidity:    20 + int(s%71),
		WindSpeed:   float64(s%300) / 10,
	}, nil
})

// GetForecast is test-weather's get_forecast.
var GetForecast = wrap(func(a cityArgs) (Forecast, error) {
	city, units, err := checkCity(a)
	if err != nil {
		return Forecast{}, err
	}
	days := 3
	if a.Days != nil {
		days = *a.Days
	}
	if days < 1 || days > 7 {
		return Forecast{}, invalid("days %d: ask for 1 to 7 days", days)
	}
	f := Forecast{City: city, Units: units, Mock: true}
	for d := 1; d <= days; d++ {
		s := seed(city, uint32(d))
		low := float64(int(s%30)) - 5
		f.Forecast = append(f.Forecast, Day{
			Day: d, Low: temp(low, units), High: temp(low+float64(3+s%10), units),
			Conditions: conditions[s%uint32(len(conditions))], Precip: int(s % 101),
		})
	}
	return f, nil
})
